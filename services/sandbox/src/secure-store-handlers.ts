// SecureStoreService: a secret value into a file in a sandbox, written through its agent (so the
// sandbox's path rules apply) and readable by the sandbox's user only.
import type { ServiceImpl } from "@connectrpc/connect";
import { secretVersionPattern } from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { failedPrecondition, requiredField } from "@aiem/kit/errors";
import { SecretVersionRevealed_Target } from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import type { SecureStoreService } from "@aiem/proto/enginemanager/sandbox/v1/secure_store_service_pb.js";
import { type AccessDeps, authorizeSandbox, requireRunning, sandboxPath, viaAgent } from "./access.js";
import type { SecretResolver } from "./process-definition.js";

export interface SecureStoreDeps extends AccessDeps {
  readonly secrets: SecretResolver | undefined;
}

export function createSecureStoreHandlers(deps: SecureStoreDeps): ServiceImpl<typeof SecureStoreService> {
  return {
    async revealSecretToFile(req, ctx) {
      const call = await authorizeSandbox(deps, ctx, req.name, "name", WorkspaceKind.sandboxEngines, Action.UPDATE);
      if (req.secretVersion === "") throw requiredField("secret_version");
      secretVersionPattern.parse(req.secretVersion, "secret_version");
      const local = sandboxPath("path", req.path);
      const handle = requireRunning(deps, call);
      if (!deps.secrets) {
        throw failedPrecondition(
          "the secure store cannot be reached from this sandbox service: it resolves secrets when the catalogue runs in the same process, or at AIEM_CATALOGUE_URL with AIEM_INTERNAL_KEY",
        );
      }
      const { name: resolved, value } = await deps.secrets.resolveSecretValue(call.principal, req.secretVersion, {
        sandboxEngine: call.row.name,
        target: SecretVersionRevealed_Target.FILE,
        destination: local,
      });
      const res = await viaAgent(deps, call, () =>
        handle.client.writeFile({ path: local, content: value, createParents: true, overwrite: true, mode: 0o600 }),
      );
      return { fileInfo: res.fileInfo, secretVersion: resolved };
    },
  };
}

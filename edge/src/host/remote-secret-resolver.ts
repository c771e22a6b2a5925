// The sandbox service's SecretResolver when the catalogue runs in another process: the
// catalogue's internal SecretResolverService, called with the shared internal key and the
// principal the sandbox authenticated. Answers keep the catalogue's codes (PERMISSION_DENIED,
// NOT_FOUND, INVALID_ARGUMENT), so a caller sees what it would see in one process.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { INTERNAL_KEY_HEADER } from "@aiem/catalogue";
import { internalError, unavailable } from "@aiem/kit/errors";
import type { Logger } from "@aiem/kit/logger";
import {
  ActingPrincipalSchema,
  SecretResolverService,
  SecretRevealSchema,
} from "@aiem/proto/enginemanager/internal/v1/secret_resolver_service_pb.js";
import type { SecretResolver } from "@aiem/sandbox";
import { createReplicaPool } from "./replica-pool.js";

export interface RemoteSecretResolverOptions {
  /** The catalogue's base URL (AIEM_CATALOGUE_URL), or its replicas' comma-separated. */
  readonly catalogueUrl: string;
  /** AIEM_INTERNAL_KEY as set (base64). */
  readonly internalKey: string;
  readonly logger: Logger;
  /** How long one call may take, in ms (default 10 s). */
  readonly timeoutMs?: number;
}

export function createRemoteSecretResolver(options: RemoteSecretResolverOptions): SecretResolver {
  // Several catalogue replicas: any of them answers.
  const client = createClient(SecretResolverService, createReplicaPool(options.catalogueUrl).transport);
  return {
    async resolveSecretValue(principal, secretVersionName, reveal) {
      try {
        const res = await client.resolveSecretValue(
          {
            principal: create(ActingPrincipalSchema, {
              name: principal.name,
              subject: principal.subject,
              displayName: principal.displayName,
              roles: [...principal.roles],
              admin: principal.admin,
            }),
            secretVersion: secretVersionName,
            reveal: create(SecretRevealSchema, {
              sandboxEngine: reveal.sandboxEngine,
              target: reveal.target,
              destination: reveal.destination,
              process: reveal.process ?? "",
            }),
          },
          { headers: { [INTERNAL_KEY_HEADER]: options.internalKey }, timeoutMs: options.timeoutMs ?? 10_000 },
        );
        return { name: res.name, value: res.value };
      } catch (err) {
        const e = ConnectError.from(err);
        if (e.code === Code.Unavailable || e.code === Code.DeadlineExceeded) {
          throw unavailable(
            `the catalogue at ${options.catalogueUrl} cannot be reached to resolve secrets: ${e.rawMessage}`,
          );
        }
        if (e.code === Code.Unauthenticated) {
          // The user's token was fine; it is the two processes that disagree, which the user cannot fix.
          options.logger.error(
            "the catalogue refused the internal key: AIEM_INTERNAL_KEY differs between the sandbox and the catalogue",
          );
          throw internalError("the sandbox service cannot resolve secrets: its internal key is not the catalogue's");
        }
        throw e;
      }
    },
  };
}

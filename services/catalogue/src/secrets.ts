// Secrets and their versions, assembled: the two public services and the internal reveal. A
// version's value is encrypted before it reaches the database (secret-cipher.ts); no call, event
// or log line ever carries a value; resolveSecretValue (secret-reveal.ts) is the only way back.
import type { ConnectRouter } from "@connectrpc/connect";
import type { Principal } from "@aiem/kit/identity";
import { registerGuarded } from "@aiem/kit/server";
import { SecretService } from "@aiem/proto/enginemanager/v1/secret_service_pb.js";
import { SecretVersionService } from "@aiem/proto/enginemanager/v1/secret_version_service_pb.js";
import { createSecretHandlers } from "./secret-handlers.js";
import { resolveSecretValue, type ResolvedSecretValue, type SecretReveal } from "./secret-reveal.js";
import { createSecretVersionHandlers, type SecretVersionDeps } from "./secret-version-handlers.js";
import type { ServiceContext } from "./service-context.js";

export interface SecretServices {
  readonly secretService: ReturnType<typeof createSecretHandlers>;
  readonly versionService: ReturnType<typeof createSecretVersionHandlers>;
  resolveSecretValue(principal: Principal, name: string, reveal: SecretReveal): Promise<ResolvedSecretValue>;
}

export function createSecretServices(deps: SecretVersionDeps): SecretServices {
  return {
    secretService: createSecretHandlers(deps.context),
    versionService: createSecretVersionHandlers(deps),
    resolveSecretValue: (principal, name, reveal) => resolveSecretValue(deps, principal, name, reveal),
  };
}

export function registerSecretServices(router: ConnectRouter, context: ServiceContext, services: SecretServices): void {
  const options = { logger: context.logger, label: "catalogue" };
  registerGuarded(router, SecretService, services.secretService, options);
  registerGuarded(router, SecretVersionService, services.versionService, options);
}

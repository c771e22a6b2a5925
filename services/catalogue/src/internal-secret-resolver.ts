// The internal SecretResolverService: resolveSecretValue for a sandbox service running in a
// process of its own. Users never reach it through the edge (it is not a public service), and
// on the catalogue's own port only a caller holding the shared internal key gets past the first
// line, so the principal it carries can be trusted as the one the calling service authenticated.
import { createHash, timingSafeEqual } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { requiredField, unauthenticated } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { guardHandler, type GuardOptions } from "@aiem/kit/server";
import { SecretVersionRevealed_Target } from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import {
  ResolveSecretValueRequestSchema,
  ResolveSecretValueResponseSchema,
  SecretResolverService,
  type ResolveSecretValueRequest,
} from "@aiem/proto/enginemanager/internal/v1/secret_resolver_service_pb.js";
import type { ResolvedSecretValue, SecretReveal } from "./secret-reveal.js";

/** The header that carries the internal key (base64, as AIEM_INTERNAL_KEY holds it). */
export const INTERNAL_KEY_HEADER = "aiem-internal-key";

/** The typeName prefix of the internal services, which the user-token interceptor lets through. */
export const INTERNAL_PACKAGE_PREFIX = "enginemanager.internal.";

export interface InternalSecretResolverDeps {
  /** The 32-byte internal key, once the catalogue is started. */
  readonly internalKey: () => Uint8Array;
  readonly resolveSecretValue: (
    principal: Principal,
    name: string,
    reveal: SecretReveal,
  ) => Promise<ResolvedSecretValue>;
  readonly guard: GuardOptions;
}

export function registerInternalSecretResolver(router: ConnectRouter, deps: InternalSecretResolverDeps): void {
  router.service(SecretResolverService, {
    resolveSecretValue: guardHandler(
      deps.guard,
      "ResolveSecretValue",
      ResolveSecretValueRequestSchema,
      async (req: ResolveSecretValueRequest, ctx) => {
        if (!internalKeyMatches(ctx.requestHeader.get(INTERNAL_KEY_HEADER), deps.internalKey())) {
          throw unauthenticated(
            `a valid internal key is required in the ${INTERNAL_KEY_HEADER} header (AIEM_INTERNAL_KEY)`,
          );
        }
        const p = req.principal;
        if (!p || p.name === "") throw requiredField("principal.name");
        const principal: Principal = {
          name: p.name,
          subject: p.subject,
          displayName: p.displayName,
          roles: [...p.roles],
          admin: p.admin,
        };
        const reveal = req.reveal;
        if (!reveal || reveal.sandboxEngine === "") throw requiredField("reveal.sandbox_engine");
        if (reveal.target === SecretVersionRevealed_Target.UNSPECIFIED) throw requiredField("reveal.target");
        if (reveal.destination === "") throw requiredField("reveal.destination");
        const resolved = await deps.resolveSecretValue(principal, req.secretVersion, {
          sandboxEngine: reveal.sandboxEngine,
          target: reveal.target,
          destination: reveal.destination,
          process: reveal.process,
        });
        return create(ResolveSecretValueResponseSchema, { name: resolved.name, value: resolved.value });
      },
    ),
  });
}

/**
 * Constant time in the key's content: both sides are hashed first, so neither the length nor the
 * bytes of a wrong key change how long the comparison takes.
 */
export function internalKeyMatches(header: string | null, key: Uint8Array): boolean {
  if (header === null || header === "") return false;
  const offered = createHash("sha256").update(Buffer.from(header.trim(), "base64")).digest();
  const expected = createHash("sha256").update(key).digest();
  return timingSafeEqual(offered, expected);
}

// Who a host's callers are: the embedded token issuer (unless an outside one is configured), the
// authenticator every call passes, and the routes the official client's login reads without a
// token (`/version`, the H2O Cloud discovery records, the issuer, the OpenAPI document).
import type { Policy } from "@aiem/kit/authz";
import type { CommonConfig } from "@aiem/kit/config";
import {
  createAuthenticator,
  createEmbeddedIssuer,
  embeddedIssuerUrl,
  ISSUED_ACCESS_TOKEN_TTL_SECONDS,
} from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import type { NodeHandler } from "../transcoder/transcoder.js";
import { createCloudDiscoveryHandler, PLATFORM_CLIENT_ID } from "./cloud-discovery.js";
import { createOidcIssuerHandler } from "./oidc-issuer.js";
import { createOpenApiHandler } from "./openapi-route.js";
import { createVersionHandler, productVersion } from "./version-route.js";

export function createHostIdentity(config: CommonConfig, policy: Policy, publicUrl: () => string, logger: Logger) {
  // Without an outside issuer, this process is one: tokens it issues carry `<public URL>/oidc`.
  const embeddedIssuer = config.oidcIssuer
    ? undefined
    : createEmbeddedIssuer({
        dataDir: config.dataDir,
        issuer: () => embeddedIssuerUrl(publicUrl()),
        // Its access tokens must pass this authenticator.
        accessTokenTtlSeconds: Math.min(ISSUED_ACCESS_TOKEN_TTL_SECONDS, config.tokenMaxLifetimeSeconds),
      });
  const authenticator = createAuthenticator({
    dataDir: config.dataDir,
    embeddedIssuer: embeddedIssuer?.issuer,
    oidcIssuer: config.oidcIssuer,
    oidcAudience: config.oidcAudience,
    rolesClaim: config.oidcRolesClaim,
    admins: policy.admins,
    maxTokenLifetimeSeconds: config.tokenMaxLifetimeSeconds,
  });

  const version = productVersion();
  const createSignInRoutes = (next: NodeHandler): NodeHandler => {
    const issuerRoutes = embeddedIssuer
      ? createOidcIssuerHandler(embeddedIssuer, logger.child({ component: "issuer" }), next)
      : next;
    const discovery = createCloudDiscoveryHandler(
      {
        publicUrl,
        issuerUrl: () => embeddedIssuer?.issuer() ?? config.oidcIssuer ?? "",
        // An outside issuer's client ids are not ours to know.
        platformClientId: embeddedIssuer ? PLATFORM_CLIENT_ID : undefined,
        version,
      },
      issuerRoutes,
    );
    return createOpenApiHandler(createVersionHandler(version, discovery));
  };
  return { embeddedIssuer, authenticator, createSignInRoutes };
}

export type HostIdentity = ReturnType<typeof createHostIdentity>;

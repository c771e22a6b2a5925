import type { NodeHandler } from "../transcoder/transcoder.js";
import { isRead, pathOf, replyJson, replyReadOnly } from "./json-reply.js";

/** Where H2O Cloud clients (h2o_discovery) look for an environment's records. */
export const CLOUD_DISCOVERY_PREFIX = "/.ai.h2o.cloud.discovery/v1/";
/** The discovery name of this service; the official client looks it up under this name. */
export const ENGINE_MANAGER_SERVICE = "engine-manager";
/** The OAuth client id the embedded issuer advertises for platform tokens (`clients/platform`). */
export const PLATFORM_CLIENT_ID = "platform";

export interface CloudDiscoveryOptions {
  /** The public URL: the environment and the API base of `services/engine-manager`. */
  publicUrl: () => string;
  /** The OpenID Connect issuer that signs our access tokens. */
  issuerUrl: () => string;
  /** The OAuth client for platform tokens; none when the issuer is an outside one we know no client of. */
  platformClientId: string | undefined;
  version: string;
}

/**
 * The read-only H2O Cloud discovery records (`/.ai.h2o.cloud.discovery/v1/...`), without a token,
 * so that the official client's `login(environment=..., platform_token=...)` finds the API, the
 * issuer and the platform client. Every list fits on one page: no `nextPageToken`.
 */
export function createCloudDiscoveryHandler(options: CloudDiscoveryOptions, next: NodeHandler): NodeHandler {
  const lists = new Map<string, () => Record<string, unknown>>(
    Object.entries({
      environment: () => ({
        environment: {
          h2oCloudEnvironment: options.publicUrl(),
          issuerUrl: options.issuerUrl(),
          // Access tokens need no particular scope here; refresh tokens carry offline access.
          h2oCloudPlatformOauth2Scope: "openid offline_access",
        },
      }),
      services: () => ({
        services: [
          {
            name: `services/${ENGINE_MANAGER_SERVICE}`,
            displayName: "AI Engine Manager",
            uri: options.publicUrl(),
            version: options.version,
          },
        ],
      }),
      clients: () => ({
        clients:
          options.platformClientId === undefined
            ? []
            : [{ name: "clients/platform", displayName: "Platform", oauth2ClientId: options.platformClientId }],
      }),
      links: () => ({ links: [] }),
      components: () => ({ components: [] }),
    }),
  );
  return (req, res) => {
    const path = pathOf(req);
    if (!path.startsWith(CLOUD_DISCOVERY_PREFIX)) return next(req, res);
    const list = lists.get(path.slice(CLOUD_DISCOVERY_PREFIX.length));
    if (!list) return next(req, res);
    if (!isRead(req)) return replyReadOnly(req, res, path);
    replyJson(req, res, 200, list(), { "cache-control": "no-store" });
  };
}

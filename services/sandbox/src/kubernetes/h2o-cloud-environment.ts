// The H2O AI Cloud variables a sandbox's container carries, as the real service's do (its
// integration tests look for them): where the environment is, its discovery and the token
// endpoint, so that h2o_discovery and the H2O clients find this installation from inside.
import { EMBEDDED_ISSUER_PATH, ISSUER_PATHS } from "@aiem/kit/identity";

/** The well-known path the edge serves the discovery records under (edge/src/host/cloud-discovery.ts). */
const DISCOVERY_PATH = "/.ai.h2o.cloud.discovery";

/**
 * The variables for an installation reached at `publicUrl`; none while it is unknown. The token
 * endpoint is named only for the embedded issuer: an outside one's is in its own discovery.
 */
export function h2oCloudEnvironment(
  publicUrl: string | undefined,
  embeddedIssuer: boolean,
): Readonly<Record<string, string>> {
  if (!publicUrl) return {};
  const base = publicUrl.replace(/\/+$/, "");
  return {
    H2O_CLOUD_ENVIRONMENT: base,
    H2O_CLOUD_DISCOVERY: `${base}${DISCOVERY_PATH}`,
    ...(embeddedIssuer ? { H2O_CLOUD_TOKEN_ENDPOINT_URL: `${base}${EMBEDDED_ISSUER_PATH}${ISSUER_PATHS.token}` } : {}),
  };
}

// A secret belongs to its creator: revealing its value, adding versions and deleting it need,
// besides the workspace's write right, its creator or an administrator.
import type { Policy } from "@aiem/kit/authz";
import { permissionDenied } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import type { Secret } from "@aiem/proto/enginemanager/v1/secret_pb.js";

/**
 * Owner's rights on a secret the caller may already act on in its workspace. Everyone who can read
 * the workspace sees that the secret exists (get and list), so refusing with PERMISSION_DENIED
 * hides nothing that NOT_FOUND would.
 */
export function checkSecretOwner(policy: Policy, principal: Principal, secret: Secret, verb: string): void {
  if (secret.creator === principal.name || policy.isAdmin(principal)) return;
  throw permissionDenied(
    `permission denied: ${principal.name} may not ${verb} ${secret.name}: only the secret's creator or an administrator may`,
  );
}

export {
  Action,
  ACTIONS,
  ADMIN_ACTIONS,
  CatalogueKind,
  isCatalogueKind,
  Kind,
  KINDS,
  permissionName,
  READ_ACTIONS,
  WorkspaceKind,
} from "./permissions.js";
export { createPolicy, embeddedPolicy, parsePolicy, policyFromDocument, PolicyError } from "./policy.js";
export type { Policy, WorkspaceRole } from "./policy.js";

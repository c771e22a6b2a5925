/** Actions of spec section 6, as they appear in `actions/enginemanager/{kind}/{ACTION}`. */
export const Action = {
  GET: "GET",
  LIST: "LIST",
  LIST_ASSIGNED: "LIST_ASSIGNED",
  LIST_ALL: "LIST_ALL",
  UPDATE: "UPDATE",
  DELETE: "DELETE",
  CREATE: "CREATE",
  DOWNLOAD_LOGS: "DOWNLOAD_LOGS",
  MIGRATE_CREATOR: "MIGRATE_CREATOR",
  RESIZE_STORAGE: "RESIZE_STORAGE",
  UPGRADE_DAI_ENGINE_VERSION: "UPGRADE_DAI_ENGINE_VERSION",
  PAUSE: "PAUSE",
  RESUME: "RESUME",
  TERMINATE: "TERMINATE",
  ASSIGN_ALIASES: "ASSIGN_ALIASES",
  ACCESS: "ACCESS",
} as const;
export type Action = (typeof Action)[keyof typeof Action];
export const ACTIONS: readonly Action[] = Object.values(Action);

/** Engines and what lives in a workspace next to them: members manage these. */
export const WorkspaceKind = {
  daiEngines: "daiEngines",
  h2oEngines: "h2oEngines",
  notebookEngines: "notebookEngines",
  sandboxEngines: "sandboxEngines",
  /** The generic, mixed engine listing (`workspaces/-/engines` needs LIST_ALL). */
  engines: "engines",
  ports: "ports",
  processes: "processes",
  /** Workspace drive: GET is read (download), CREATE/UPDATE/DELETE are write (upload). */
  drive: "drive",
  secrets: "secrets",
  secretVersions: "secretVersions",
} as const;
export type WorkspaceKind = (typeof WorkspaceKind)[keyof typeof WorkspaceKind];

/** Catalogue resources: everyone authenticated reads them, administrators write them. */
export const CatalogueKind = {
  daiEngineProfiles: "daiEngineProfiles",
  h2oEngineProfiles: "h2oEngineProfiles",
  notebookEngineProfiles: "notebookEngineProfiles",
  daiEngineVersions: "daiEngineVersions",
  h2oEngineVersions: "h2oEngineVersions",
  notebookEngineImages: "notebookEngineImages",
  sandboxEngineImages: "sandboxEngineImages",
  sandboxEngineTemplates: "sandboxEngineTemplates",
} as const;
export type CatalogueKind = (typeof CatalogueKind)[keyof typeof CatalogueKind];

export const Kind = { ...WorkspaceKind, ...CatalogueKind } as const;
export type Kind = WorkspaceKind | CatalogueKind;
export const KINDS: readonly Kind[] = Object.values(Kind);

const CATALOGUE_KINDS: ReadonlySet<string> = new Set(Object.values(CatalogueKind));

export function isCatalogueKind(kind: Kind): kind is CatalogueKind {
  return CATALOGUE_KINDS.has(kind);
}

/** `actions/enginemanager/daiEngines/CREATE` */
export function permissionName(kind: Kind, action: Action): string {
  return `actions/enginemanager/${kind}/${action}`;
}

/** Read actions: what viewers may do, and anyone on the catalogue. */
export const READ_ACTIONS: ReadonlySet<Action> = new Set([Action.GET, Action.LIST, Action.LIST_ASSIGNED]);

/** Reserved for administrators whatever the kind. */
export const ADMIN_ACTIONS: ReadonlySet<Action> = new Set([Action.MIGRATE_CREATOR, Action.LIST_ALL]);

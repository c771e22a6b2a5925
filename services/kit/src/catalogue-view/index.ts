// The catalogue as the services that follow it see it: built from the catalogue's public event
// stream, with no code of the catalogue service.
export { CATCH_UP_WAIT, caughtUpFirst } from "./caught-up-first.js";
export { DEFAULT_CONSTRAINTS, DEFAULT_SANDBOX_MAX_RUNNING_SECONDS } from "./defaults.js";
export { createCatalogueReadModel, isProfileAssignedTo } from "./read-model.js";
export type { CatalogueChange, CatalogueReadModel, CatalogueReadModelOptions } from "./read-model.js";
export { KIND_BY_EVENT_CASE, kindOfName } from "./resources.js";
export type { CatalogueEventCase, CatalogueResource, CatalogueResourceByKind } from "./resources.js";

// The catalogue service: DAI, H2O and notebook engine profiles, DAI and H2O versions, notebook and
// sandbox images, sandbox templates, and secrets. A host mounts createCatalogueModule() behind the
// auth interceptor; engine and sandbox services follow the catalogue through its events with
// `@aiem/kit/catalogue-view`, not through this package.
export { readCatalogueEnv } from "./config.js";
export type { CatalogueConfig, CatalogueSettings } from "./config.js";
export { CATALOGUE_SCHEMA, CATALOGUE_SERVICES, createCatalogueModule } from "./module.js";
export type { CatalogueModule, CatalogueModuleDeps } from "./module.js";
export { DEFAULT_GIT_DIRECTORY, DEFAULT_GIT_REF, KIND_DESCRIPTORS, kindOfName } from "./kinds.js";
export type { CatalogueResource, CatalogueResourceByKind, KindDescriptor } from "./kinds.js";
export type { ResolvedSecretValue, SecretReveal } from "./secret-reveal.js";
export { INTERNAL_KEY_HEADER, INTERNAL_PACKAGE_PREFIX } from "./internal-secret-resolver.js";
export { DEMO_WORKSPACE } from "./seed.js";

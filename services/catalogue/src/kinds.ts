// The registry of catalogue kinds: one descriptor per kind (kind-descriptor.ts), defined by family
// in profile-kinds.ts, version-kinds.ts, image-kinds.ts and template-kind.ts.
import type { CatalogueKind } from "@aiem/kit/authz";
import type { KindDescriptor } from "./kind-descriptor.js";
import { daiEngineProfiles, h2oEngineProfiles, notebookEngineProfiles } from "./profile-kinds.js";
import { daiEngineVersions, h2oEngineVersions } from "./version-kinds.js";
import { notebookEngineImages, sandboxEngineImages } from "./image-kinds.js";
import { sandboxEngineTemplates } from "./template-kind.js";

export type { CatalogueResource, CatalogueResourceByKind } from "@aiem/kit/catalogue-view";
export type { CatalogueServices, ColumnSpec, Family, KindDescriptor } from "./kind-descriptor.js";
export {
  DEFAULT_GIT_DIRECTORY,
  DEFAULT_GIT_REF,
  daiEngineProfiles,
  h2oEngineProfiles,
  notebookEngineProfiles,
} from "./profile-kinds.js";
export { daiEngineVersions, h2oEngineVersions } from "./version-kinds.js";
export { notebookEngineImages, sandboxEngineImages } from "./image-kinds.js";
export { sandboxEngineTemplates } from "./template-kind.js";

export const KIND_DESCRIPTORS: { readonly [K in CatalogueKind]: KindDescriptor<K> } = {
  daiEngineProfiles,
  h2oEngineProfiles,
  notebookEngineProfiles,
  daiEngineVersions,
  h2oEngineVersions,
  notebookEngineImages,
  sandboxEngineImages,
  sandboxEngineTemplates,
};

export const ALL_KINDS: readonly KindDescriptor[] = Object.values(KIND_DESCRIPTORS) as KindDescriptor[];

/** The descriptor of a kind, for code that handles kinds generically. */
export function descriptorOf(kind: CatalogueKind): KindDescriptor {
  return KIND_DESCRIPTORS[kind] as unknown as KindDescriptor;
}

/** Kind of a catalogue resource name (`workspaces/global/daiEngineVersions/1.2.3`), if any. */
export function kindOfName(name: string): CatalogueKind | undefined {
  const collection = /^workspaces\/[^/]+\/([A-Za-z0-9]+)\/[^/]+$/.exec(name)?.[1];
  return collection !== undefined && Object.hasOwn(KIND_DESCRIPTORS, collection)
    ? (collection as CatalogueKind)
    : undefined;
}

// The catalogue's resources as its public event stream carries them (proto
// `enginemanager.events.v1`): what services that follow the catalogue need to know of it, without
// the catalogue service's own code.
import { CatalogueKind } from "../authz/index.js";
import type { CatalogueResourceChanged } from "@aiem/proto/enginemanager/events/v1/catalogue_events_pb.js";
import type { DAIEngineProfile } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import type { DAIEngineVersion } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import type { H2OEngineProfile } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_pb.js";
import type { H2OEngineVersion } from "@aiem/proto/enginemanager/v1/h2o_engine_version_pb.js";
import type { NotebookEngineImage } from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import type { NotebookEngineProfile } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_pb.js";
import type { SandboxEngineImage } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_pb.js";
import type { SandboxEngineTemplate } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_pb.js";

/** The resource type of each kind, by collection id. */
export interface CatalogueResourceByKind {
  daiEngineProfiles: DAIEngineProfile;
  h2oEngineProfiles: H2OEngineProfile;
  notebookEngineProfiles: NotebookEngineProfile;
  daiEngineVersions: DAIEngineVersion;
  h2oEngineVersions: H2OEngineVersion;
  notebookEngineImages: NotebookEngineImage;
  sandboxEngineImages: SandboxEngineImage;
  sandboxEngineTemplates: SandboxEngineTemplate;
}

export type CatalogueResource = CatalogueResourceByKind[CatalogueKind];

export type CatalogueEventCase = NonNullable<CatalogueResourceChanged["resource"]["case"]>;

/** The kind each member of `CatalogueResourceChanged.resource` carries. */
export const KIND_BY_EVENT_CASE: Readonly<Record<CatalogueEventCase, CatalogueKind>> = {
  daiEngineProfile: CatalogueKind.daiEngineProfiles,
  h2oEngineProfile: CatalogueKind.h2oEngineProfiles,
  notebookEngineProfile: CatalogueKind.notebookEngineProfiles,
  daiEngineVersion: CatalogueKind.daiEngineVersions,
  h2oEngineVersion: CatalogueKind.h2oEngineVersions,
  notebookEngineImage: CatalogueKind.notebookEngineImages,
  sandboxEngineImage: CatalogueKind.sandboxEngineImages,
  sandboxEngineTemplate: CatalogueKind.sandboxEngineTemplates,
};

/** Kind of a catalogue resource name (`workspaces/global/daiEngineVersions/1.2.3`), if any. */
export function kindOfName(name: string): CatalogueKind | undefined {
  const collection = /^workspaces\/[^/]+\/([A-Za-z0-9]+)\/[^/]+$/.exec(name)?.[1];
  return collection !== undefined && Object.hasOwn(CatalogueKind, collection)
    ? (collection as CatalogueKind)
    : undefined;
}

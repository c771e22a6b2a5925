// What describes a catalogue kind: its protobuf schema and service, table, typed columns (what
// lists filter and sort on), update-mask allow-list, write-time defaults, validation and the view
// clients get. Everything else (store, handlers, events, read model) is generic over these.
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import type { FieldType, IdValidator, ResourcePattern } from "@aiem/kit/aip";
import type { CatalogueKind } from "@aiem/kit/authz";
import type { CatalogueResourceChanged } from "@aiem/proto/enginemanager/events/v1/catalogue_events_pb.js";
import type { CatalogueResourceByKind } from "@aiem/kit/catalogue-view";
import type { DAIEngineProfileService } from "@aiem/proto/enginemanager/v1/dai_engine_profile_service_pb.js";
import type { DAIEngineVersionService } from "@aiem/proto/enginemanager/v1/dai_engine_version_service_pb.js";
import type { H2OEngineProfileService } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_service_pb.js";
import type { H2OEngineVersionService } from "@aiem/proto/enginemanager/v1/h2o_engine_version_service_pb.js";
import type { NotebookEngineImageService } from "@aiem/proto/enginemanager/v1/notebook_engine_image_service_pb.js";
import type { NotebookEngineProfileService } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_service_pb.js";
import type { SandboxEngineImageService } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_service_pb.js";
import type { SandboxEngineTemplateService } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_service_pb.js";
import type { Violations } from "./validation.js";

export type Family = "profile" | "version" | "image" | "template";

/** The service of each kind, whose every method its handlers implement. */
export interface CatalogueServices {
  readonly daiEngineProfiles: typeof DAIEngineProfileService;
  readonly h2oEngineProfiles: typeof H2OEngineProfileService;
  readonly notebookEngineProfiles: typeof NotebookEngineProfileService;
  readonly daiEngineVersions: typeof DAIEngineVersionService;
  readonly h2oEngineVersions: typeof H2OEngineVersionService;
  readonly notebookEngineImages: typeof NotebookEngineImageService;
  readonly sandboxEngineImages: typeof SandboxEngineImageService;
  readonly sandboxEngineTemplates: typeof SandboxEngineTemplateService;
}

/** A typed column of a kind's table, beyond the common ones (name, times, resource bytes). */
export interface ColumnSpec<R> {
  readonly column: string;
  /** The public field name lists filter and sort on; absent for internal columns. */
  readonly field?: string;
  readonly type: FieldType | "text[]";
  readonly nullable?: boolean;
  readonly durationUnit?: "ms";
  readonly value: (r: R) => unknown;
}

export interface KindDescriptor<K extends CatalogueKind = CatalogueKind> {
  /** Collection id, as in names, permissions and subjects: `daiEngineProfiles`. */
  readonly kind: K;
  readonly family: Family;
  readonly schema: GenMessage<CatalogueResourceByKind[K]>;
  readonly service: CatalogueServices[K];
  /** `enginemanager.ai/DAIEngineProfile` */
  readonly resourceType: string;
  /** The singular in method names: `CreateDAIEngineProfile`. */
  readonly singular: string;
  readonly table: string;
  readonly pattern: ResourcePattern<string>;
  /** The id variable of the pattern: `dai_engine_profile`. */
  readonly idVar: string;
  /** Request/response field of the resource, JSON name and snake_case: `daiEngineProfile`. */
  readonly resourceLocal: string;
  readonly resourceField: string;
  /** List response field: `daiEngineProfiles`. */
  readonly pluralLocal: string;
  /** Create id field: `daiEngineProfileId` / `dai_engine_profile_id`. */
  readonly idLocal: string;
  readonly idField: string;
  readonly validateId: IdValidator;
  /** Set when the id is optional: the word generated ids start with. */
  readonly generatedIdWord?: string;
  readonly eventCase: NonNullable<CatalogueResourceChanged["resource"]["case"]>;
  readonly columns: readonly ColumnSpec<CatalogueResourceByKind[K]>[];
  /** Update mask paths, in the order `*` expands to (spec section 5). */
  readonly updatable: readonly string[];
  /** Fills server defaults into a resource about to be written. */
  readonly prepare?: (r: CatalogueResourceByKind[K]) => void;
  /** Adds a violation for each invalid field (paths relative to the resource). */
  readonly validate: (r: CatalogueResourceByKind[K], v: Violations) => void;
  /** The resource as clients and consumers see it (derived defaults filled in); must not mutate. */
  readonly present?: (r: CatalogueResourceByKind[K]) => CatalogueResourceByKind[K];
}

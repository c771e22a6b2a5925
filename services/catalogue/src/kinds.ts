// One descriptor per catalogue kind: its protobuf schema and service, table, typed columns (what
// lists filter and sort on), update-mask allow-list, write-time defaults, validation and the view
// clients get. Everything else (store, handlers, events, read model) is generic over these.
import { clone, create, type DescService } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  daiEngineProfilePattern,
  daiEngineVersionPattern,
  h2oEngineProfilePattern,
  h2oEngineVersionPattern,
  notebookEngineImagePattern,
  notebookEngineProfilePattern,
  sandboxEngineImagePattern,
  sandboxEngineTemplatePattern,
  validateResourceId,
  validateVersionId,
  type FieldType,
  type IdValidator,
  type ResourcePattern,
} from "@aiem/kit/aip";
import { CatalogueKind } from "@aiem/kit/authz";
import type { CatalogueResourceChanged } from "@aiem/proto/enginemanager/events/v1/catalogue_events_pb.js";
import {
  DAIEngineProfile_ConfigEditabilitySchema,
  DAIEngineProfileSchema,
  type DAIEngineProfile,
} from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import { DAIEngineProfileService } from "@aiem/proto/enginemanager/v1/dai_engine_profile_service_pb.js";
import { DAIEngineVersionSchema, type DAIEngineVersion } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import { DAIEngineVersionService } from "@aiem/proto/enginemanager/v1/dai_engine_version_service_pb.js";
import { H2OEngineProfileSchema, type H2OEngineProfile } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_pb.js";
import { H2OEngineProfileService } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_service_pb.js";
import { H2OEngineVersionSchema, type H2OEngineVersion } from "@aiem/proto/enginemanager/v1/h2o_engine_version_pb.js";
import { H2OEngineVersionService } from "@aiem/proto/enginemanager/v1/h2o_engine_version_service_pb.js";
import { ImagePullPolicySchema } from "@aiem/proto/enginemanager/v1/image_pull_policy_pb.js";
import { NotebookEngineImageSchema, type NotebookEngineImage } from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import { NotebookEngineImageService } from "@aiem/proto/enginemanager/v1/notebook_engine_image_service_pb.js";
import { NotebookEngineProfileSchema, type NotebookEngineProfile } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_pb.js";
import { NotebookEngineProfileService } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_service_pb.js";
import { SandboxEngineImageSchema, type SandboxEngineImage } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_pb.js";
import { SandboxEngineImageService } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_service_pb.js";
import { SandboxEngineTemplateSchema } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_pb.js";
import { SandboxEngineTemplateService } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_service_pb.js";
import { DEFAULT_CONSTRAINTS, DEFAULT_SANDBOX_MAX_RUNNING_SECONDS, type CatalogueResourceByKind } from "@aiem/kit/catalogue-view";
import {
  Violations,
  checkDisplayName,
  checkDuration,
  checkDurationConstraint,
  checkEnum,
  checkImage,
  checkNumericConstraint,
  checkPullSecrets,
  checkRoles,
  checkStringMap,
  checkText,
  checkYaml,
  configKeyRule,
  durationToMs,
  envNameRule,
} from "./validation.js";

export type { CatalogueResource, CatalogueResourceByKind } from "@aiem/kit/catalogue-view";

export type Family = "profile" | "version" | "image" | "template";

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
  readonly service: DescService;
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

// ---- profiles -----------------------------------------------------------------------------------

const seconds = (s: number) => create(DurationSchema, { seconds: BigInt(s) });

export const DEFAULT_GIT_REF = "HEAD";
export const DEFAULT_GIT_DIRECTORY = "Example";

type AnyProfile = DAIEngineProfile | H2OEngineProfile | NotebookEngineProfile;

function prepareCommonProfile(p: AnyProfile): void {
  p.cpuConstraint ??= DEFAULT_CONSTRAINTS.cpu();
  p.gpuConstraint ??= DEFAULT_CONSTRAINTS.gpu();
  p.memoryBytesConstraint ??= DEFAULT_CONSTRAINTS.memoryBytes();
  p.maxIdleDurationConstraint ??= DEFAULT_CONSTRAINTS.maxIdleDuration();
  p.maxRunningDurationConstraint ??= DEFAULT_CONSTRAINTS.maxRunningDuration();
}

function validateCommonProfile(p: AnyProfile, v: Violations): void {
  checkDisplayName(v, "display_name", p.displayName);
  checkRoles(v, "assigned_oidc_roles", p.assignedOidcRoles);
  if (p.maxRunningEngines !== undefined && p.maxRunningEngines < 0) {
    v.add("max_running_engines", `must not be negative (got ${p.maxRunningEngines}); leave it unset for no limit`);
  }
  checkNumericConstraint(v, "cpu_constraint", p.cpuConstraint, 1n);
  checkNumericConstraint(v, "gpu_constraint", p.gpuConstraint, 0n);
  checkNumericConstraint(v, "memory_bytes_constraint", p.memoryBytesConstraint, 1n);
  checkDurationConstraint(v, "max_idle_duration_constraint", p.maxIdleDurationConstraint);
  checkDurationConstraint(v, "max_running_duration_constraint", p.maxRunningDurationConstraint);
  checkYaml(v, "yaml_pod_template_spec", p.yamlPodTemplateSpec, "mapping");
  checkYaml(v, "yaml_gpu_tolerations", p.yamlGpuTolerations, "list");
  checkText(v, "gpu_resource_name", p.gpuResourceName, 253);
}

const profileColumns: ColumnSpec<AnyProfile>[] = [
  { column: "display_name", field: "display_name", type: "string", value: (r) => r.displayName },
  { column: "priority", field: "priority", type: "int", value: (r) => r.priority },
  { column: "enabled", field: "enabled", type: "bool", value: (r) => r.enabled },
  { column: "assigned_oidc_roles_enabled", type: "bool", value: (r) => r.assignedOidcRolesEnabled },
  { column: "assigned_oidc_roles", type: "text[]", value: (r) => [...r.assignedOidcRoles] },
];

const COMMON_PROFILE_PATHS = [
  "display_name",
  "priority",
  "enabled",
  "assigned_oidc_roles_enabled",
  "assigned_oidc_roles",
  "max_running_engines",
] as const;

export const daiEngineProfiles: KindDescriptor<"daiEngineProfiles"> = {
  kind: CatalogueKind.daiEngineProfiles,
  family: "profile",
  schema: DAIEngineProfileSchema,
  service: DAIEngineProfileService,
  resourceType: "enginemanager.ai/DAIEngineProfile",
  singular: "DAIEngineProfile",
  table: "dai_engine_profiles",
  pattern: daiEngineProfilePattern,
  idVar: "dai_engine_profile",
  resourceLocal: "daiEngineProfile",
  resourceField: "dai_engine_profile",
  pluralLocal: "daiEngineProfiles",
  idLocal: "daiEngineProfileId",
  idField: "dai_engine_profile_id",
  validateId: validateResourceId,
  eventCase: "daiEngineProfile",
  columns: profileColumns,
  updatable: [
    ...COMMON_PROFILE_PATHS,
    "cpu_constraint",
    "gpu_constraint",
    "memory_bytes_constraint",
    "storage_bytes_constraint",
    "max_idle_duration_constraint",
    "max_running_duration_constraint",
    "max_non_interaction_duration",
    "max_unused_duration",
    "configuration_override",
    "base_configuration",
    "config_editability",
    "yaml_pod_template_spec",
    "yaml_gpu_tolerations",
    "triton_enabled",
    "gpu_resource_name",
    "data_directory_storage_class",
  ],
  prepare(p) {
    prepareCommonProfile(p);
    p.storageBytesConstraint ??= DEFAULT_CONSTRAINTS.storageBytes();
  },
  validate(p, v) {
    validateCommonProfile(p, v);
    checkNumericConstraint(v, "storage_bytes_constraint", p.storageBytesConstraint, 1n);
    checkDuration(v, "max_non_interaction_duration", p.maxNonInteractionDuration, { positive: true });
    checkDuration(v, "max_unused_duration", p.maxUnusedDuration, { positive: true });
    checkStringMap(v, "configuration_override", p.configurationOverride, configKeyRule);
    checkStringMap(v, "base_configuration", p.baseConfiguration, configKeyRule);
    checkEnum(v, "config_editability", DAIEngineProfile_ConfigEditabilitySchema, p.configEditability);
    checkText(v, "data_directory_storage_class", p.dataDirectoryStorageClass, 253);
  },
};

export const h2oEngineProfiles: KindDescriptor<"h2oEngineProfiles"> = {
  kind: CatalogueKind.h2oEngineProfiles,
  family: "profile",
  schema: H2OEngineProfileSchema,
  service: H2OEngineProfileService,
  resourceType: "enginemanager.ai/H2OEngineProfile",
  singular: "H2OEngineProfile",
  table: "h2o_engine_profiles",
  pattern: h2oEngineProfilePattern,
  idVar: "h2o_engine_profile",
  resourceLocal: "h2oEngineProfile",
  resourceField: "h2o_engine_profile",
  pluralLocal: "h2oEngineProfiles",
  idLocal: "h2oEngineProfileId",
  idField: "h2o_engine_profile_id",
  validateId: validateResourceId,
  eventCase: "h2oEngineProfile",
  columns: profileColumns,
  updatable: [
    ...COMMON_PROFILE_PATHS,
    "node_count_constraint",
    "cpu_constraint",
    "gpu_constraint",
    "memory_bytes_constraint",
    "max_idle_duration_constraint",
    "max_running_duration_constraint",
    "yaml_pod_template_spec",
    "yaml_gpu_tolerations",
    "gpu_resource_name",
    "java_classpath",
    "java_options",
    "h2o_options",
  ],
  prepare(p) {
    prepareCommonProfile(p);
    p.nodeCountConstraint ??= DEFAULT_CONSTRAINTS.nodeCount();
  },
  validate(p, v) {
    validateCommonProfile(p, v);
    checkNumericConstraint(v, "node_count_constraint", p.nodeCountConstraint, 1n);
    checkText(v, "java_classpath", p.javaClasspath);
    checkText(v, "java_options", p.javaOptions);
    checkText(v, "h2o_options", p.h2oOptions);
  },
};

export const notebookEngineProfiles: KindDescriptor<"notebookEngineProfiles"> = {
  kind: CatalogueKind.notebookEngineProfiles,
  family: "profile",
  schema: NotebookEngineProfileSchema,
  service: NotebookEngineProfileService,
  resourceType: "enginemanager.ai/NotebookEngineProfile",
  singular: "NotebookEngineProfile",
  table: "notebook_engine_profiles",
  pattern: notebookEngineProfilePattern,
  idVar: "notebook_engine_profile",
  resourceLocal: "notebookEngineProfile",
  resourceField: "notebook_engine_profile",
  pluralLocal: "notebookEngineProfiles",
  idLocal: "notebookEngineProfileId",
  idField: "notebook_engine_profile_id",
  validateId: validateResourceId,
  eventCase: "notebookEngineProfile",
  columns: profileColumns,
  updatable: [
    ...COMMON_PROFILE_PATHS,
    "cpu_constraint",
    "gpu_constraint",
    "memory_bytes_constraint",
    "storage_bytes_constraint",
    "max_idle_duration_constraint",
    "max_running_duration_constraint",
    "yaml_pod_template_spec",
    "yaml_gpu_tolerations",
    "storage_class_name",
    "gpu_resource_name",
  ],
  prepare(p) {
    prepareCommonProfile(p);
    p.storageBytesConstraint ??= DEFAULT_CONSTRAINTS.storageBytes();
    if (p.gitRef === "") p.gitRef = DEFAULT_GIT_REF;
    if (p.gitDirectoryName === "") p.gitDirectoryName = DEFAULT_GIT_DIRECTORY;
  },
  validate(p, v) {
    validateCommonProfile(p, v);
    checkNumericConstraint(v, "storage_bytes_constraint", p.storageBytesConstraint, 1n);
    checkText(v, "storage_class_name", p.storageClassName, 253);
    if (p.syncGitRepositoryEnabled && p.gitRepository.trim() === "") {
      v.add("git_repository", "is required when sync_git_repository_enabled is true");
    }
    checkText(v, "git_repository", p.gitRepository, 2048);
    if (/\s/.test(p.gitRepository)) v.add("git_repository", "must be a repository URL without spaces");
    checkText(v, "git_ref", p.gitRef, 255);
    if (/[\s~^:?*[\\]|\.\.|^-/.test(p.gitRef)) v.add("git_ref", "must be a branch, tag or commit name (no spaces, .., ~, ^, :, ?, *, [ or \\, not starting with -)");
    checkText(v, "git_directory_name", p.gitDirectoryName, 255);
    if (/[/\\]|^\.{1,2}$/.test(p.gitDirectoryName)) v.add("git_directory_name", "must be a single directory name (no / and not . or ..)");
  },
};

// ---- versions -----------------------------------------------------------------------------------

type AnyVersion = DAIEngineVersion | H2OEngineVersion;

const versionColumns: ColumnSpec<AnyVersion>[] = [
  { column: "deprecated", field: "deprecated", type: "bool", value: (r) => r.deprecated },
  { column: "image", field: "image", type: "string", value: (r) => r.image },
];

const VERSION_PATHS = ["deprecated", "image", "image_pull_policy", "image_pull_secrets"];

function validateVersion(r: AnyVersion, v: Violations): void {
  checkImage(v, "image", r.image);
  checkEnum(v, "image_pull_policy", ImagePullPolicySchema, r.imagePullPolicy);
  checkPullSecrets(v, "image_pull_secrets", r.imagePullSecrets);
}

export const daiEngineVersions: KindDescriptor<"daiEngineVersions"> = {
  kind: CatalogueKind.daiEngineVersions,
  family: "version",
  schema: DAIEngineVersionSchema,
  service: DAIEngineVersionService,
  resourceType: "enginemanager.ai/DAIEngineVersion",
  singular: "DAIEngineVersion",
  table: "dai_engine_versions",
  pattern: daiEngineVersionPattern,
  idVar: "dai_engine_version",
  resourceLocal: "daiEngineVersion",
  resourceField: "dai_engine_version",
  pluralLocal: "daiEngineVersions",
  idLocal: "daiEngineVersionId",
  idField: "dai_engine_version_id",
  validateId: validateVersionId,
  eventCase: "daiEngineVersion",
  columns: versionColumns,
  updatable: VERSION_PATHS,
  validate: validateVersion,
};

export const h2oEngineVersions: KindDescriptor<"h2oEngineVersions"> = {
  kind: CatalogueKind.h2oEngineVersions,
  family: "version",
  schema: H2OEngineVersionSchema,
  service: H2OEngineVersionService,
  resourceType: "enginemanager.ai/H2OEngineVersion",
  singular: "H2OEngineVersion",
  table: "h2o_engine_versions",
  pattern: h2oEngineVersionPattern,
  idVar: "h2o_engine_version",
  resourceLocal: "h2oEngineVersion",
  resourceField: "h2o_engine_version",
  pluralLocal: "h2oEngineVersions",
  idLocal: "h2oEngineVersionId",
  idField: "h2o_engine_version_id",
  validateId: validateVersionId,
  eventCase: "h2oEngineVersion",
  columns: versionColumns,
  updatable: VERSION_PATHS,
  validate: validateVersion,
};

// ---- images -------------------------------------------------------------------------------------

type AnyImage = NotebookEngineImage | SandboxEngineImage;

const imageColumns: ColumnSpec<AnyImage>[] = [
  { column: "display_name", field: "display_name", type: "string", value: (r) => r.displayName },
  { column: "image", field: "image", type: "string", value: (r) => r.image },
  { column: "enabled", field: "enabled", type: "bool", value: (r) => r.enabled },
];

const IMAGE_PATHS = ["display_name", "image", "enabled", "image_pull_policy", "image_pull_secrets"];

function validateImage(r: AnyImage, v: Violations): void {
  checkDisplayName(v, "display_name", r.displayName);
  checkImage(v, "image", r.image);
  checkEnum(v, "image_pull_policy", ImagePullPolicySchema, r.imagePullPolicy);
  checkPullSecrets(v, "image_pull_secrets", r.imagePullSecrets);
}

export const notebookEngineImages: KindDescriptor<"notebookEngineImages"> = {
  kind: CatalogueKind.notebookEngineImages,
  family: "image",
  schema: NotebookEngineImageSchema,
  service: NotebookEngineImageService,
  resourceType: "enginemanager.ai/NotebookEngineImage",
  singular: "NotebookEngineImage",
  table: "notebook_engine_images",
  pattern: notebookEngineImagePattern,
  idVar: "notebook_engine_image",
  resourceLocal: "notebookEngineImage",
  resourceField: "notebook_engine_image",
  pluralLocal: "notebookEngineImages",
  idLocal: "notebookEngineImageId",
  idField: "notebook_engine_image_id",
  validateId: validateResourceId,
  generatedIdWord: "image",
  eventCase: "notebookEngineImage",
  columns: imageColumns,
  updatable: IMAGE_PATHS,
  validate: validateImage,
};

export const sandboxEngineImages: KindDescriptor<"sandboxEngineImages"> = {
  kind: CatalogueKind.sandboxEngineImages,
  family: "image",
  schema: SandboxEngineImageSchema,
  service: SandboxEngineImageService,
  resourceType: "enginemanager.ai/SandboxEngineImage",
  singular: "SandboxEngineImage",
  table: "sandbox_engine_images",
  pattern: sandboxEngineImagePattern,
  idVar: "sandbox_engine_image",
  resourceLocal: "sandboxEngineImage",
  resourceField: "sandbox_engine_image",
  pluralLocal: "sandboxEngineImages",
  idLocal: "sandboxEngineImageId",
  idField: "sandbox_engine_image_id",
  validateId: validateResourceId,
  generatedIdWord: "image",
  eventCase: "sandboxEngineImage",
  columns: imageColumns,
  updatable: IMAGE_PATHS,
  validate: validateImage,
};

// ---- templates ----------------------------------------------------------------------------------

export const sandboxEngineTemplates: KindDescriptor<"sandboxEngineTemplates"> = {
  kind: CatalogueKind.sandboxEngineTemplates,
  family: "template",
  schema: SandboxEngineTemplateSchema,
  service: SandboxEngineTemplateService,
  resourceType: "enginemanager.ai/SandboxEngineTemplate",
  singular: "SandboxEngineTemplate",
  table: "sandbox_engine_templates",
  pattern: sandboxEngineTemplatePattern,
  idVar: "sandbox_engine_template",
  resourceLocal: "sandboxEngineTemplate",
  resourceField: "sandbox_engine_template",
  pluralLocal: "sandboxEngineTemplates",
  idLocal: "sandboxEngineTemplateId",
  idField: "sandbox_engine_template_id",
  validateId: validateResourceId,
  generatedIdWord: "template",
  eventCase: "sandboxEngineTemplate",
  columns: [
    { column: "display_name", field: "display_name", type: "string", value: (r) => r.displayName },
    { column: "enabled", field: "enabled", type: "bool", value: (r) => r.enabled },
    { column: "gpu", field: "gpu", type: "int", value: (r) => r.gpu },
    { column: "memory_bytes_limit", field: "memory_bytes_limit", type: "int", value: (r) => r.memoryBytesLimit },
    {
      column: "max_idle_ms",
      field: "max_idle_duration",
      type: "duration",
      durationUnit: "ms",
      value: (r) => durationToMs(r.maxIdleDuration) ?? 0n,
    },
  ],
  updatable: [
    "display_name",
    "milli_cpu_request",
    "milli_cpu_limit",
    "gpu_resource",
    "gpu",
    "memory_bytes_request",
    "memory_bytes_limit",
    "storage_bytes",
    "storage_class_name",
    "environmental_variables",
    "yaml_pod_template_spec",
    "enabled",
    "max_idle_duration",
    "max_running_duration",
  ],
  prepare(t) {
    // The official client sends 0 for the optional numbers its caller left out: 0 means unset.
    if (t.milliCpuRequest === 0) t.milliCpuRequest = undefined;
    if (t.milliCpuLimit === 0) t.milliCpuLimit = undefined;
    if (t.memoryBytesRequest === 0n) t.memoryBytesRequest = undefined;
    if (t.storageBytes === 0n) t.storageBytes = undefined;
    t.maxRunningDuration ??= seconds(Number(DEFAULT_SANDBOX_MAX_RUNNING_SECONDS));
  },
  validate(t, v) {
    checkDisplayName(v, "display_name", t.displayName);
    if (t.milliCpuLimit !== undefined && t.milliCpuLimit < 0) {
      v.add("milli_cpu_limit", `must not be negative (1000 is one core; got ${t.milliCpuLimit}); 0 or unset means no cpu limit`);
    }
    if (t.milliCpuRequest !== undefined) {
      if (t.milliCpuRequest < 0) v.add("milli_cpu_request", `must not be negative (1000 is one core; got ${t.milliCpuRequest})`);
      else if (t.milliCpuLimit !== undefined && t.milliCpuLimit > 0 && t.milliCpuRequest > t.milliCpuLimit) {
        v.add("milli_cpu_request", `must not be above milli_cpu_limit (${t.milliCpuRequest} > ${t.milliCpuLimit})`);
      }
    }
    checkText(v, "gpu_resource", t.gpuResource, 253);
    if (t.gpu < 0) v.add("gpu", `must not be negative (got ${t.gpu})`);
    if (t.memoryBytesLimit === 0n) v.add("memory_bytes_limit", "is required: the most memory a sandbox may use, in bytes");
    else if (t.memoryBytesLimit < 0n) v.add("memory_bytes_limit", `must be above 0 (got ${t.memoryBytesLimit})`);
    if (t.memoryBytesRequest !== undefined) {
      if (t.memoryBytesRequest < 0n) v.add("memory_bytes_request", `must not be negative (got ${t.memoryBytesRequest})`);
      else if (t.memoryBytesLimit > 0n && t.memoryBytesRequest > t.memoryBytesLimit) {
        v.add("memory_bytes_request", `must not be above memory_bytes_limit (${t.memoryBytesRequest} > ${t.memoryBytesLimit})`);
      }
    }
    if (t.storageBytes !== undefined && t.storageBytes < 0n) {
      v.add("storage_bytes", `must not be negative (got ${t.storageBytes}); 0 or unset means no quota`);
    }
    checkText(v, "storage_class_name", t.storageClassName, 253);
    checkStringMap(v, "environmental_variables", t.environmentalVariables, envNameRule);
    checkYaml(v, "yaml_pod_template_spec", t.yamlPodTemplateSpec, "mapping");
    // 0s means no limit, as the official client documents for both durations.
    checkDuration(v, "max_idle_duration", t.maxIdleDuration, { required: true });
    checkDuration(v, "max_running_duration", t.maxRunningDuration);
  },
  present(t) {
    // Requests left unset follow their limits, also when a limit changes later. Unset limits
    // show as 0 (the official client reads these numbers without a null check), and templates
    // stored before they had a running limit show the default.
    const complete = [t.milliCpuRequest, t.milliCpuLimit, t.memoryBytesRequest, t.storageBytes, t.maxRunningDuration].every((f) => f !== undefined);
    if (complete) return t;
    const out = clone(SandboxEngineTemplateSchema, t);
    out.milliCpuLimit ??= 0;
    out.milliCpuRequest ??= out.milliCpuLimit;
    out.memoryBytesRequest ??= out.memoryBytesLimit;
    out.storageBytes ??= 0n;
    out.maxRunningDuration ??= seconds(Number(DEFAULT_SANDBOX_MAX_RUNNING_SECONDS));
    return out;
  },
};

// ---- registry -----------------------------------------------------------------------------------

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
  return collection !== undefined && Object.hasOwn(KIND_DESCRIPTORS, collection) ? (collection as CatalogueKind) : undefined;
}

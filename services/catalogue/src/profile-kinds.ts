// The three engine profile kinds: DAI, H2O and notebook profiles, with their constraints.
import {
  daiEngineProfilePattern,
  h2oEngineProfilePattern,
  notebookEngineProfilePattern,
  validateResourceId,
} from "@aiem/kit/aip";
import { CatalogueKind } from "@aiem/kit/authz";
import {
  DAIEngineProfile_ConfigEditabilitySchema,
  DAIEngineProfileSchema,
  type DAIEngineProfile,
} from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import { DAIEngineProfileService } from "@aiem/proto/enginemanager/v1/dai_engine_profile_service_pb.js";
import { H2OEngineProfileSchema, type H2OEngineProfile } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_pb.js";
import { H2OEngineProfileService } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_service_pb.js";
import {
  NotebookEngineProfileSchema,
  type NotebookEngineProfile,
} from "@aiem/proto/enginemanager/v1/notebook_engine_profile_pb.js";
import { NotebookEngineProfileService } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_service_pb.js";
import { DEFAULT_CONSTRAINTS } from "@aiem/kit/catalogue-view";
import {
  type Violations,
  checkDisplayName,
  checkDuration,
  checkDurationConstraint,
  checkEnum,
  checkNumericConstraint,
  checkRoles,
  checkStringMap,
  checkText,
  checkYaml,
  configKeyRule,
} from "./validation.js";
import type { ColumnSpec, KindDescriptor } from "./kind-descriptor.js";

export const DEFAULT_GIT_REF = "HEAD";
export const DEFAULT_GIT_DIRECTORY = "Example";

type AnyProfile = DAIEngineProfile | H2OEngineProfile | NotebookEngineProfile;

/** The GPU resource a profile without one requests, as the real service fills it in. */
export const DEFAULT_GPU_RESOURCE_NAME = "nvidia.com/gpu";

function prepareCommonProfile(p: AnyProfile): void {
  if (p.gpuResourceName === "") p.gpuResourceName = DEFAULT_GPU_RESOURCE_NAME;
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
    if (/[\s~^:?*[\\]|\.\.|^-/.test(p.gitRef))
      v.add(
        "git_ref",
        "must be a branch, tag or commit name (no spaces, .., ~, ^, :, ?, *, [ or \\, not starting with -)",
      );
    checkText(v, "git_directory_name", p.gitDirectoryName, 255);
    if (/[/\\]|^\.{1,2}$/.test(p.gitDirectoryName))
      v.add("git_directory_name", "must be a single directory name (no / and not . or ..)");
  },
};

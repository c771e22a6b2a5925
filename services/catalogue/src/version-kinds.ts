// The DAI and H2O engine version kinds, named by their version number and found by aliases.
import { daiEngineVersionPattern, h2oEngineVersionPattern, validateVersionId } from "@aiem/kit/aip";
import { CatalogueKind } from "@aiem/kit/authz";
import { DAIEngineVersionSchema, type DAIEngineVersion } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import { DAIEngineVersionService } from "@aiem/proto/enginemanager/v1/dai_engine_version_service_pb.js";
import { H2OEngineVersionSchema, type H2OEngineVersion } from "@aiem/proto/enginemanager/v1/h2o_engine_version_pb.js";
import { H2OEngineVersionService } from "@aiem/proto/enginemanager/v1/h2o_engine_version_service_pb.js";
import { defaultPullPolicy, validateImageSource } from "./validation.js";
import type { ColumnSpec, KindDescriptor } from "./kind-descriptor.js";
import { versionIdOf, versionSortKey } from "./version-order.js";

type AnyVersion = DAIEngineVersion | H2OEngineVersion;

const versionColumns: ColumnSpec<AnyVersion>[] = [
  { column: "deprecated", field: "deprecated", type: "bool", value: (r) => r.deprecated },
  { column: "image", field: "image", type: "string", value: (r) => r.image },
  // Internal: lists sort on it as the field `version` (see fieldTableOf).
  { column: "version_key", type: "string", value: (r) => versionSortKey(versionIdOf(r.name)) },
];

const VERSION_PATHS = ["deprecated", "image", "image_pull_policy", "image_pull_secrets"];

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
  prepare: defaultPullPolicy,
  validate: validateImageSource,
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
  prepare: defaultPullPolicy,
  validate: validateImageSource,
};

// The notebook and sandbox engine image kinds.
import { notebookEngineImagePattern, sandboxEngineImagePattern, validateResourceId } from "@aiem/kit/aip";
import { CatalogueKind } from "@aiem/kit/authz";
import {
  NotebookEngineImageSchema,
  type NotebookEngineImage,
} from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import { NotebookEngineImageService } from "@aiem/proto/enginemanager/v1/notebook_engine_image_service_pb.js";
import {
  SandboxEngineImageSchema,
  type SandboxEngineImage,
} from "@aiem/proto/enginemanager/v1/sandbox_engine_image_pb.js";
import { SandboxEngineImageService } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_service_pb.js";
import { type Violations, checkDisplayName, defaultPullPolicy, validateImageSource } from "./validation.js";
import type { ColumnSpec, KindDescriptor } from "./kind-descriptor.js";

type AnyImage = NotebookEngineImage | SandboxEngineImage;

const imageColumns: ColumnSpec<AnyImage>[] = [
  { column: "display_name", field: "display_name", type: "string", value: (r) => r.displayName },
  { column: "image", field: "image", type: "string", value: (r) => r.image },
  { column: "enabled", field: "enabled", type: "bool", value: (r) => r.enabled },
];

const IMAGE_PATHS = ["display_name", "image", "enabled", "image_pull_policy", "image_pull_secrets"];

function validateImage(r: AnyImage, v: Violations): void {
  checkDisplayName(v, "display_name", r.displayName);
  validateImageSource(r, v);
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
  prepare: defaultPullPolicy,
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
  prepare: defaultPullPolicy,
  validate: validateImage,
};

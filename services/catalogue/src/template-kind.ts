// The sandbox engine template kind: the limits a sandbox engine runs within.
import { clone, create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { sandboxEngineTemplatePattern, validateResourceId } from "@aiem/kit/aip";
import { CatalogueKind } from "@aiem/kit/authz";
import { SandboxEngineTemplateSchema } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_pb.js";
import { SandboxEngineTemplateService } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_service_pb.js";
import { DEFAULT_SANDBOX_MAX_RUNNING_SECONDS } from "@aiem/kit/catalogue-view";
import {
  checkDisplayName,
  checkDuration,
  checkStringMap,
  checkText,
  checkYaml,
  durationToMs,
  envNameRule,
} from "./validation.js";
import type { KindDescriptor } from "./kind-descriptor.js";

const seconds = (s: number) => create(DurationSchema, { seconds: BigInt(s) });

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
      v.add(
        "milli_cpu_limit",
        `must not be negative (1000 is one core; got ${t.milliCpuLimit}); 0 or unset means no cpu limit`,
      );
    }
    if (t.milliCpuRequest !== undefined) {
      if (t.milliCpuRequest < 0)
        v.add("milli_cpu_request", `must not be negative (1000 is one core; got ${t.milliCpuRequest})`);
      else if (t.milliCpuLimit !== undefined && t.milliCpuLimit > 0 && t.milliCpuRequest > t.milliCpuLimit) {
        v.add("milli_cpu_request", `must not be above milli_cpu_limit (${t.milliCpuRequest} > ${t.milliCpuLimit})`);
      }
    }
    checkText(v, "gpu_resource", t.gpuResource, 253);
    if (t.gpu < 0) v.add("gpu", `must not be negative (got ${t.gpu})`);
    if (t.memoryBytesLimit === 0n)
      v.add("memory_bytes_limit", "is required: the most memory a sandbox may use, in bytes");
    else if (t.memoryBytesLimit < 0n) v.add("memory_bytes_limit", `must be above 0 (got ${t.memoryBytesLimit})`);
    if (t.memoryBytesRequest !== undefined) {
      if (t.memoryBytesRequest < 0n)
        v.add("memory_bytes_request", `must not be negative (got ${t.memoryBytesRequest})`);
      else if (t.memoryBytesLimit > 0n && t.memoryBytesRequest > t.memoryBytesLimit) {
        v.add(
          "memory_bytes_request",
          `must not be above memory_bytes_limit (${t.memoryBytesRequest} > ${t.memoryBytesLimit})`,
        );
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
    const complete = [
      t.milliCpuRequest,
      t.milliCpuLimit,
      t.memoryBytesRequest,
      t.storageBytes,
      t.maxRunningDuration,
    ].every((f) => f !== undefined);
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

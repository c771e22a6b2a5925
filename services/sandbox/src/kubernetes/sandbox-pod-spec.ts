// What a sandbox's pod is made from, read from its resource: the image and template snapshots it
// was created with (so a template changed later does not change a running sandbox).
import type { PodTemplate } from "@aiem/kit/kubernetes";
import type { SandboxEngine } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { parse } from "yaml";
import type { SandboxPodSpec } from "./sandbox-objects.js";

/** The proto enum's value: 1 Always, 2 Never, 3 IfNotPresent, 0 the cluster's default. */
const pullPolicies: Record<number, string> = { 1: "Always", 2: "Never", 3: "IfNotPresent" };

/** `cloudEnvironment`: the H2O AI Cloud variables of this installation, the same for every sandbox. */
export function sandboxPodSpecOf(
  engine: SandboxEngine,
  cloudEnvironment?: Readonly<Record<string, string>>,
): SandboxPodSpec {
  const image = engine.sandboxEngineImageInfo;
  const template = engine.sandboxEngineTemplateInfo;
  // The catalogue checked the YAML when the template was written; parsing only makes objects of it.
  const podTemplate = template?.yamlPodTemplateSpec
    ? (parse(template.yamlPodTemplateSpec) as PodTemplate | null)
    : undefined;
  return {
    uid: engine.uid,
    name: engine.name,
    creator: engine.creator,
    creatorDisplayName: engine.creatorDisplayName,
    image: image?.image ?? "",
    imagePullPolicy: pullPolicies[image?.imagePullPolicy ?? 0],
    imagePullSecrets: image?.imagePullSecrets ?? [],
    milliCpuRequest: template?.milliCpuRequest,
    milliCpuLimit: template?.milliCpuLimit,
    memoryBytesRequest: template?.memoryBytesRequest,
    memoryBytesLimit: template?.memoryBytesLimit ?? 0n,
    storageBytes: template?.storageBytes,
    gpu: template?.gpu ?? 0,
    gpuResource: template?.gpuResource,
    podTemplate: podTemplate ?? undefined,
    environment: template?.environmentalVariables ?? {},
    cloudEnvironment,
  };
}

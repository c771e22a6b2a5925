// The placement settings of an engine's profile and version, as the Kubernetes runtime reads them.
// The catalogue checked the YAML's shape when it was written (docs/adr/0045); parsing here only
// turns it into objects.
import type { V1Toleration } from "@kubernetes/client-node";
import { parse } from "yaml";
import type { KubernetesPlacement } from "./engine-objects.js";
import type { PodTemplate } from "./pod-template.js";

export interface PlacementSources {
  readonly yamlPodTemplateSpec?: string;
  readonly yamlGpuTolerations?: string;
  readonly gpuResourceName?: string;
  readonly storageClassName?: string;
  /** The proto enum's value: 1 Always, 2 Never, 3 IfNotPresent, 0 the cluster's default. */
  readonly imagePullPolicy?: number;
  readonly imagePullSecrets?: readonly string[];
}

const pullPolicies: Record<number, string> = { 1: "Always", 2: "Never", 3: "IfNotPresent" };

export function placementOf(sources: PlacementSources): KubernetesPlacement {
  const podTemplate = sources.yamlPodTemplateSpec ? (parse(sources.yamlPodTemplateSpec) as PodTemplate) : undefined;
  const gpuTolerations = sources.yamlGpuTolerations ? (parse(sources.yamlGpuTolerations) as V1Toleration[]) : undefined;
  const pullPolicy = pullPolicies[sources.imagePullPolicy ?? 0];
  return {
    ...(podTemplate ? { podTemplate } : {}),
    ...(gpuTolerations && gpuTolerations.length > 0 ? { gpuTolerations } : {}),
    ...(sources.gpuResourceName ? { gpuResourceName: sources.gpuResourceName } : {}),
    ...(sources.storageClassName ? { storageClassName: sources.storageClassName } : {}),
    ...(pullPolicy ? { imagePullPolicy: pullPolicy } : {}),
    ...(sources.imagePullSecrets && sources.imagePullSecrets.length > 0
      ? { imagePullSecrets: [...sources.imagePullSecrets] }
      : {}),
  };
}

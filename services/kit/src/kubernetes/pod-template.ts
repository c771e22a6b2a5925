// How a profile's `yaml_pod_template_spec` is laid over the pod we make: a strategic merge as
// `kubectl patch` does it (lists of named things merged by their key, the template winning on
// conflicts), except that our labels stay (they select the pod) and that GPU tolerations, when
// the engine has GPUs, replace the template's tolerations (as the real service does).
import type { V1ObjectMeta, V1Pod, V1PodSpec, V1Toleration } from "@kubernetes/client-node";

/** A parsed `yaml_pod_template_spec`: a PodTemplateSpec (`metadata` and `spec`), every field optional. */
export interface PodTemplate {
  readonly metadata?: Pick<V1ObjectMeta, "labels" | "annotations">;
  readonly spec?: Partial<V1PodSpec>;
}

/** Lists merged element by element, keyed by this field, as Kubernetes' strategic merge does. */
const mergeKeys: Readonly<Record<string, string>> = {
  containers: "name",
  initContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
  ports: "containerPort",
  imagePullSecrets: "name",
};

export function mergePodTemplate(
  pod: V1Pod,
  template: PodTemplate | undefined,
  gpuTolerations: readonly V1Toleration[] | undefined,
): V1Pod {
  const metadata = pod.metadata ?? {};
  const spec = merge(pod.spec ?? {}, template?.spec ?? {}) as V1PodSpec;
  if (gpuTolerations && gpuTolerations.length > 0) spec.tolerations = [...gpuTolerations];
  return {
    ...pod,
    metadata: {
      ...metadata,
      labels: { ...template?.metadata?.labels, ...metadata.labels },
      annotations: { ...template?.metadata?.annotations, ...metadata.annotations },
    },
    spec,
  };
}

function merge(base: unknown, overlay: unknown, key?: string): unknown {
  if (overlay === undefined || overlay === null) return base;
  if (Array.isArray(overlay)) {
    const mergeKey = key ? mergeKeys[key] : undefined;
    if (!mergeKey || !Array.isArray(base)) return overlay;
    const result = [...base];
    for (const item of overlay) {
      const at = result.findIndex(
        (existing) => isObject(existing) && isObject(item) && existing[mergeKey] === item[mergeKey],
      );
      if (at >= 0) result[at] = merge(result[at], item);
      else result.push(item);
    }
    return result;
  }
  if (isObject(overlay) && isObject(base)) {
    const result: Record<string, unknown> = { ...base };
    for (const [field, value] of Object.entries(overlay)) result[field] = merge(base[field], value, field);
    return result;
  }
  return overlay;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

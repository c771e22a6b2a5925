// The Kubernetes objects an engine runs as, computed from what it should be and nothing else:
// a claim for its data, a pod and a Service, all named `engine-<uid>` with the labels the real
// service's integration tests look for (docs/adr/0161). Pure, so every field can be unit-tested.
import { managedBy, type Owner, ownerReferencesOf } from "@aiem/kit/kubernetes";
import type { V1Container, V1PersistentVolumeClaim, V1Pod, V1Service, V1Toleration } from "@kubernetes/client-node";
import type { EngineRunSpec } from "../runtime.js";
import { mergePodTemplate, type PodTemplate } from "./pod-template.js";

export { managedBy, type Owner, ownerReferencesOf };

/** What only a Kubernetes runtime reads: the profile's and the version's placement settings. */
export interface KubernetesPlacement {
  /** `Always`, `IfNotPresent` or `Never`; the cluster's default when unset. */
  readonly imagePullPolicy?: string;
  readonly imagePullSecrets?: readonly string[];
  /** The claim's storage class; the cluster's default class when unset. */
  readonly storageClassName?: string;
  /** The extended resource a GPU is requested as; `nvidia.com/gpu` when unset. */
  readonly gpuResourceName?: string;
  /** The profile's `yaml_pod_template_spec`, parsed: merged over the pod we make. */
  readonly podTemplate?: PodTemplate;
  /** The profile's `yaml_gpu_tolerations`, parsed: they replace the template's tolerations when gpu > 0. */
  readonly gpuTolerations?: readonly V1Toleration[];
}

export interface EngineObjects {
  readonly claim: V1PersistentVolumeClaim;
  readonly pod: V1Pod;
  readonly service: V1Service;
}

export const defaultGpuResourceName = "nvidia.com/gpu";

interface KindShape {
  readonly container: string;
  readonly port: number;
  readonly dataPath: string;
}

/** `app.kubernetes.io/name` of each kind, after the resource type as the sandbox's `sandbox-engine`. */
export const appNames: Readonly<Record<EngineRunSpec["kind"], string>> = {
  dai: "dai-engine",
  h2o: "h2o-engine",
  notebook: "notebook-engine",
};

const shapes: Record<"dai" | "notebook", KindShape> = {
  dai: { container: "driverless-ai", port: 12345, dataPath: "/data" },
  // Jupyter Docker Stacks images: the user jovyan, home in /home/jovyan, group 100.
  notebook: { container: "notebook", port: 8888, dataPath: "/home/jovyan" },
};

export function engineObjectName(uid: string): string {
  return `engine-${uid}`;
}

/** The labels every object of an engine carries; `app.kubernetes.io/instance` selects its pod. */
export function engineLabels(spec: Pick<EngineRunSpec, "uid" | "kind">): Record<string, string> {
  return {
    "app.kubernetes.io/name": appNames[spec.kind],
    "app.kubernetes.io/instance": spec.uid,
    "app.kubernetes.io/managed-by": managedBy,
    "app.kubernetes.io/created-by": managedBy,
  };
}

export function engineAnnotations(spec: EngineRunSpec, placement: KubernetesPlacement): Record<string, string> {
  return {
    "engine.h2o.ai/name": spec.name,
    "engine.h2o.ai/version": spec.version,
    "engine.h2o.ai/gpu-resource-name": placement.gpuResourceName || defaultGpuResourceName,
  };
}

/**
 * The claim, pod and Service of a DAI or notebook engine. `owner` (the claim once it exists) owns
 * the pod and the Service, so deleting the claim deletes the engine.
 */
export function engineObjects(
  spec: EngineRunSpec,
  namespace: string,
  placement: KubernetesPlacement = {},
  owner?: Owner,
): EngineObjects {
  const name = engineObjectName(spec.uid);
  const labels = engineLabels(spec);
  const annotations = engineAnnotations(spec, placement);
  const ownerReferences = ownerReferencesOf(owner);
  const meta = { name, namespace, labels, annotations };
  return {
    claim: engineClaim(spec, meta, placement),
    pod: enginePod(spec, { ...meta, ...(ownerReferences ? { ownerReferences } : {}) }, placement),
    service: engineService(spec, { ...meta, ...(ownerReferences ? { ownerReferences } : {}) }),
  };
}

export type Meta = NonNullable<V1Pod["metadata"]>;

/** CPU, memory and GPUs as requests and limits alike (the scheduler places what the engine gets). */
export function resourcesOf(spec: EngineRunSpec, placement: KubernetesPlacement) {
  const gpuResource = placement.gpuResourceName || defaultGpuResourceName;
  const amounts: Record<string, string> = {
    cpu: String(spec.cpu),
    memory: spec.memoryBytes.toString(),
    ...(spec.gpu > 0 ? { [gpuResource]: String(spec.gpu) } : {}),
  };
  return { requests: amounts, limits: amounts };
}

/** What every engine pod shares: no restarts (an end is a failure with its reason), no API token, pull secrets. */
export function podSpecBase(placement: KubernetesPlacement) {
  return {
    // An engine that stops on its own is FAILED with a reason, as on the local runtime; the
    // kubelet restarting it would hide that.
    restartPolicy: "Never",
    // Engines never call the Kubernetes API.
    automountServiceAccountToken: false,
    ...(placement.imagePullSecrets && placement.imagePullSecrets.length > 0
      ? { imagePullSecrets: placement.imagePullSecrets.map((secret) => ({ name: secret })) }
      : {}),
  };
}

function engineClaim(spec: EngineRunSpec, metadata: Meta, placement: KubernetesPlacement): V1PersistentVolumeClaim {
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata,
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: spec.storageBytes.toString() } },
      ...(placement.storageClassName ? { storageClassName: placement.storageClassName } : {}),
    },
  };
}

function engineService(spec: EngineRunSpec, metadata: Meta): V1Service {
  const shape = shapeOf(spec.kind);
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata,
    spec: {
      type: "ClusterIP",
      selector: { "app.kubernetes.io/instance": spec.uid },
      ports: [{ name: "http", port: shape.port, targetPort: shape.port, protocol: "TCP" }],
    },
  };
}

function enginePod(spec: EngineRunSpec, metadata: Meta, placement: KubernetesPlacement): V1Pod {
  const shape = shapeOf(spec.kind);
  const container: V1Container = {
    name: shape.container,
    image: spec.image,
    ...(placement.imagePullPolicy ? { imagePullPolicy: placement.imagePullPolicy } : {}),
    ports: [{ name: "http", containerPort: shape.port, protocol: "TCP" }],
    env: spec.kind === "dai" ? daiEnvironment(spec) : notebookEnvironment(spec),
    resources: resourcesOf(spec, placement),
    volumeMounts: [{ name: "data", mountPath: shape.dataPath }],
    readinessProbe: { tcpSocket: { port: shape.port }, periodSeconds: 5 },
  };
  const base: V1Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: {
      containers: [container],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: engineObjectName(spec.uid) } }],
      ...podSpecBase(placement),
      ...(spec.kind === "notebook" ? { securityContext: { fsGroup: 100 } } : {}),
    },
  };
  return mergePodTemplate(base, placement.podTemplate, spec.gpu > 0 ? placement.gpuTolerations : undefined);
}

/** DAI reads each configuration key `k` from the variable `DRIVERLESS_AI_K`. */
function daiEnvironment(spec: EngineRunSpec): { name: string; value: string }[] {
  const config: Record<string, string> = { override_virtual_cores: String(spec.cpu), ...spec.config };
  return Object.entries(config)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => ({ name: `DRIVERLESS_AI_${key.toUpperCase()}`, value }));
}

function notebookEnvironment(spec: EngineRunSpec): { name: string; value: string }[] {
  // Jupyter Docker Stacks' start script passes NOTEBOOK_ARGS to the server; the edge proxies the
  // engine's path and checks the caller, so the server asks for no token of its own.
  return [{ name: "NOTEBOOK_ARGS", value: `--ServerApp.base_url=${spec.basePath} --IdentityProvider.token=` }];
}

function shapeOf(kind: EngineRunSpec["kind"]): KindShape {
  if (kind === "h2o") throw new Error("H2O engines run as a cluster of pods, not one pod");
  return shapes[kind];
}

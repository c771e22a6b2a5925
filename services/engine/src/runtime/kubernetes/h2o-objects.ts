// The Kubernetes objects of an H2O engine: `node_count` pods `engine-<uid>-<i>` that form one
// H2O-3 cloud, found by each other through a headless Service `engine-<uid>` (H2O-3's own
// Kubernetes discovery: it resolves the Service's name and waits for the expected count). The
// Service owns the pods, so deleting it deletes the engine. H2O keeps its data in memory: no claim.
import type { V1Container, V1Pod, V1Service } from "@kubernetes/client-node";
import type { EngineRunSpec } from "../runtime.js";
import {
  engineAnnotations,
  engineLabels,
  engineObjectName,
  type KubernetesPlacement,
  type Owner,
  ownerReferencesOf,
  podSpecBase,
  resourcesOf,
} from "./engine-objects.js";
import { mergePodTemplate } from "./pod-template.js";

/** H2O-3's REST API and web UI. */
export const h2oPort = 54321;
/** Where H2O-3's Kubernetes discovery answers whether a node leads the cloud. */
const discoveryApiPort = 8081;
/**
 * Where the H2O-3 jar lies in the image: the layout of H2O's own Kubernetes images
 * (h2oai/h2o-open-source-k8s). A profile's pod template may set another command.
 */
export const h2oJarInImage = "/opt/h2oai/h2o-3/h2o.jar";
/** The label Kubernetes puts on a StatefulSet's pods; our H2O pods carry their node index the same way. */
export const podIndexLabel = "apps.kubernetes.io/pod-index";
/** The node count of the cloud, on the Service and each pod, so a partial cloud is told from a whole one. */
export const nodeCountAnnotation = "engine.h2o.ai/node-count";

export interface H2OObjects {
  readonly service: V1Service;
  readonly pods: readonly V1Pod[];
}

export function h2oPodName(uid: string, index: number): string {
  return `${engineObjectName(uid)}-${index}`;
}

/** The DNS name of one node: the pod's hostname under the headless Service. */
export function h2oNodeHost(uid: string, index: number, namespace: string): string {
  return `${h2oPodName(uid, index)}.${engineObjectName(uid)}.${namespace}.svc`;
}

export function h2oObjects(
  spec: EngineRunSpec,
  namespace: string,
  placement: KubernetesPlacement = {},
  owner?: Owner,
): H2OObjects {
  const name = engineObjectName(spec.uid);
  const labels = engineLabels(spec);
  const nodeCount = Math.max(1, spec.nodeCount);
  const annotations = { ...engineAnnotations(spec, placement), [nodeCountAnnotation]: String(nodeCount) };
  const service: V1Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, labels, annotations },
    spec: {
      clusterIP: "None",
      // Nodes look each other up before any of them is ready: the cloud forms first.
      publishNotReadyAddresses: true,
      selector: { "app.kubernetes.io/instance": spec.uid },
      ports: [{ name: "http", port: h2oPort, targetPort: h2oPort, protocol: "TCP" }],
    },
  };
  const ownerReferences = ownerReferencesOf(owner);
  const pods = Array.from({ length: nodeCount }, (_, index) =>
    h2oPod(spec, namespace, placement, index, nodeCount, {
      name: h2oPodName(spec.uid, index),
      namespace,
      labels: { ...labels, [podIndexLabel]: String(index) },
      annotations,
      ...(ownerReferences ? { ownerReferences } : {}),
    }),
  );
  return { service, pods };
}

function h2oPod(
  spec: EngineRunSpec,
  namespace: string,
  placement: KubernetesPlacement,
  index: number,
  nodeCount: number,
  metadata: NonNullable<V1Pod["metadata"]>,
): V1Pod {
  const heapMiB = Math.max(256, Number(spec.memoryBytes / 1048576n));
  const classpath = [h2oJarInImage, ...(spec.options.javaClasspath ? [spec.options.javaClasspath] : [])];
  const container: V1Container = {
    name: "h2o",
    image: spec.image,
    ...(placement.imagePullPolicy ? { imagePullPolicy: placement.imagePullPolicy } : {}),
    command: [
      "java",
      `-Xmx${heapMiB}m`,
      // What the jar's manifest opens under `java -jar`; started by class name (to add the
      // profile's classpath), the JVM needs them said.
      ...["java.lang", "java.util", "java.lang.reflect"].map((pkg) => `--add-opens=java.base/${pkg}=ALL-UNNAMED`),
      ...words(spec.options.javaOptions),
      "-cp",
      classpath.join(":"),
      "water.H2OApp",
      "-name",
      `aiem-${spec.uid}`,
      "-port",
      String(h2oPort),
      "-context_path",
      spec.basePath.replace(/\/$/, ""),
      "-nthreads",
      String(spec.cpu),
      ...words(spec.options.h2oOptions),
    ],
    env: [
      // H2O-3's Kubernetes discovery: the headless Service's name, how many nodes to wait for.
      { name: "H2O_KUBERNETES_SERVICE_DNS", value: `${engineObjectName(spec.uid)}.${namespace}.svc.cluster.local` },
      { name: "H2O_NODE_EXPECTED_COUNT", value: String(nodeCount) },
      { name: "H2O_NODE_LOOKUP_TIMEOUT", value: "180" },
      { name: "H2O_KUBERNETES_API_PORT", value: String(discoveryApiPort) },
    ],
    ports: [
      { name: "http", containerPort: h2oPort, protocol: "TCP" },
      { name: "discovery", containerPort: discoveryApiPort, protocol: "TCP" },
    ],
    resources: resourcesOf(spec, placement),
    readinessProbe: { tcpSocket: { port: h2oPort }, periodSeconds: 5 },
  };
  const base: V1Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata,
    spec: {
      // `engine-<uid>-<i>.engine-<uid>.<namespace>.svc`: one name per node, as a StatefulSet's.
      hostname: h2oPodName(spec.uid, index),
      subdomain: engineObjectName(spec.uid),
      containers: [container],
      ...podSpecBase(placement),
    },
  };
  return mergePodTemplate(base, placement.podTemplate, spec.gpu > 0 ? placement.gpuTolerations : undefined);
}

function words(text: string | undefined): string[] {
  return text ? text.split(/\s+/).filter(Boolean) : [];
}

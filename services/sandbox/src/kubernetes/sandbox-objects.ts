// The Kubernetes objects a sandbox runs as, computed from what it should be and nothing else: a
// pod `engine-<uid>` running the sandbox image with our agent injected, a Service `engine-<uid>`
// for the agent, and per port a Service `engine-<uid>-port-<port>` (and, while public, an
// HTTPRoute of that name), with the names, labels and annotations the real service's integration
// tests look for (docs/adr/0245). Pure, so every field can be unit-tested.
import { managedBy, mergePodTemplate, type Owner, ownerReferencesOf, type PodTemplate } from "@aiem/kit/kubernetes";
import type { V1Container, V1ObjectMeta, V1Pod, V1Secret, V1Service } from "@kubernetes/client-node";

/** The port the agent serves on in the pod (gRPC over HTTP/2), named `grpc`. */
export const agentPort = 50051;
/** Where the agent image holds the agent (docs/adr/0272). */
export const agentImagePath = "/aiem/agent";
/** Where the init container puts the agent, an emptyDir the sandbox container sees read-only. */
export const agentDir = "/.aiem";
/** Where the sandbox's Secret (the agent's configuration, token included) is mounted read-only. */
export const agentConfigDir = "/.aiem-config";
/** The Secret's key, and so the file's name under agentConfigDir. */
export const agentConfigKey = "agent.json";
export const defaultGpuResource = "nvidia.com/gpu";
export const appName = "sandbox-engine";
export const portIdLabel = "engine.h2o.ai/port-id";
/** The Gateway API group and the resource public ports are routed with. */
export const gatewayGroup = "gateway.networking.k8s.io";

/** Everything a sandbox's pod is made from: its resource's image and template snapshots. */
export interface SandboxPodSpec {
  readonly uid: string;
  /** `workspaces/<w>/sandboxEngines/<id>`. */
  readonly name: string;
  readonly creator: string;
  readonly creatorDisplayName: string;
  readonly image: string;
  /** `Always`, `IfNotPresent` or `Never`; the cluster's default when unset. */
  readonly imagePullPolicy?: string | undefined;
  readonly imagePullSecrets?: readonly string[] | undefined;
  readonly milliCpuRequest?: number | undefined;
  readonly milliCpuLimit?: number | undefined;
  readonly memoryBytesRequest?: bigint | undefined;
  readonly memoryBytesLimit: bigint;
  readonly storageBytes?: bigint | undefined;
  readonly gpu: number;
  readonly gpuResource?: string | undefined;
  /** The template's `yaml_pod_template_spec`, parsed: merged over the pod we make. */
  readonly podTemplate?: PodTemplate | undefined;
  /** The template's environment variables (each process gets them too, from its start). */
  readonly environment?: Readonly<Record<string, string>> | undefined;
  /** The H2O AI Cloud variables of this installation (`h2oCloudEnvironment`). */
  readonly cloudEnvironment?: Readonly<Record<string, string>> | undefined;
}

/** How the agent is brought into a pod: the image holding it, and the agent's configuration. */
export interface AgentInjection {
  /** An image with the static agent at /aiem/agent (AIEM_SANDBOX_AGENT_IMAGE; `npm run build:agent-image`). */
  readonly image: string;
  readonly imagePullPolicy?: string | undefined;
  /** The agent's JSON configuration, without the token (added per sandbox, in its Secret). */
  readonly config: string;
}

export function sandboxObjectName(uid: string): string {
  return `engine-${uid}`;
}

export function portObjectName(uid: string, port: number): string {
  return `engine-${uid}-port-${port}`;
}

/** The labels every object of a sandbox carries; `app.kubernetes.io/instance` selects its pod. */
export function sandboxLabels(uid: string): Record<string, string> {
  return {
    "app.kubernetes.io/name": appName,
    "app.kubernetes.io/instance": uid,
    "app.kubernetes.io/managed-by": managedBy,
    "app.kubernetes.io/created-by": managedBy,
  };
}

/** A label value from a principal's name (`users/abc` → `abc`): labels allow no `/` and at most 63 characters. */
export function labelValue(text: string): string {
  const last = text.split("/").pop() ?? "";
  return last
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
}

/** `workspaces/<w>/...` → `<w>`. */
function workspaceOf(name: string): string {
  return name.split("/")[1] ?? "";
}

/**
 * The sandbox's pod. The init container's agent installs itself into an emptyDir and the
 * sandbox container runs it as its command, so any image (with or without a shell) becomes a
 * sandbox; `owner` (the sandbox's Service once it exists) owns it.
 */
export function sandboxPod(spec: SandboxPodSpec, namespace: string, agent: AgentInjection, owner?: Owner): V1Pod {
  const ownerReferences = ownerReferencesOf(owner);
  const creator = labelValue(spec.creator);
  const container: V1Container = {
    name: "sandbox",
    image: spec.image,
    ...(spec.imagePullPolicy ? { imagePullPolicy: spec.imagePullPolicy } : {}),
    command: [`${agentDir}/agent`],
    ports: [{ name: "grpc", containerPort: agentPort, protocol: "TCP" }],
    // The configuration (its token) is a file of the sandbox's Secret, not a value in this spec,
    // which more people may read than the namespace's Secrets.
    env: [
      { name: "AIEM_AGENT_CONFIG_FILE", value: `${agentConfigDir}/${agentConfigKey}` },
      ...containerEnvironment(spec),
    ],
    resources: resourcesOf(spec),
    volumeMounts: [
      { name: "aiem-agent", mountPath: agentDir, readOnly: true },
      { name: "aiem-agent-config", mountPath: agentConfigDir, readOnly: true },
    ],
    readinessProbe: { tcpSocket: { port: agentPort }, periodSeconds: 2 },
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
  };
  const base: V1Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: sandboxObjectName(spec.uid),
      namespace,
      labels: { ...sandboxLabels(spec.uid), "cloud.h2o.ai/creator": creator, "cloud.h2o.ai/owner": creator },
      annotations: {
        "cloud.h2o.ai/resource": `//engine-manager/${spec.name}`,
        "cloud.h2o.ai/workspace-id": workspaceOf(spec.name),
        "cloud.h2o.ai/creator": spec.creator,
        "cloud.h2o.ai/creator-display-name": spec.creatorDisplayName,
      },
      ...(ownerReferences ? { ownerReferences } : {}),
    },
    spec: {
      initContainers: [
        {
          name: "aiem-agent",
          image: agent.image,
          ...(agent.imagePullPolicy ? { imagePullPolicy: agent.imagePullPolicy } : {}),
          // The image holds the agent alone (no shell, no cp): the agent installs itself.
          command: [agentImagePath, "install", `${agentDir}/agent`],
          volumeMounts: [{ name: "aiem-agent", mountPath: agentDir }],
          resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { cpu: "100m", memory: "64Mi" } },
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        },
      ],
      containers: [container],
      volumes: [
        { name: "aiem-agent", emptyDir: { sizeLimit: "64Mi" } },
        // Readable by the pod's user only (the group is fsGroup's), the agent's user.
        { name: "aiem-agent-config", secret: { secretName: sandboxObjectName(spec.uid), defaultMode: 0o440 } },
      ],
      // A sandbox whose agent ends is FAILED with its reason; a kubelet restart would hide that
      // and bring back an empty sandbox under the same name.
      restartPolicy: "Never",
      // Sandboxes run other people's code; it never gets a token for the Kubernetes API.
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        fsGroup: 1000,
        seccompProfile: { type: "RuntimeDefault" },
      },
      ...(spec.imagePullSecrets && spec.imagePullSecrets.length > 0
        ? { imagePullSecrets: spec.imagePullSecrets.map((secret) => ({ name: secret })) }
        : {}),
    },
  };
  return mergePodTemplate(base, spec.podTemplate, undefined);
}

/**
 * The sandbox container's variables besides the agent's: H2O AI Cloud's, then the template's,
 * which may replace them but never a variable the agent reads (the last of a name wins in a pod).
 */
export function containerEnvironment(spec: SandboxPodSpec): { name: string; value: string }[] {
  const merged: Record<string, string> = { ...spec.cloudEnvironment, ...spec.environment };
  return Object.entries(merged)
    .filter(([name]) => !name.startsWith("AIEM_AGENT_"))
    .map(([name, value]) => ({ name, value }));
}

/** The template's requests and limits as the real service sets them: memory and CPU both, storage as a limit. */
export function resourcesOf(spec: SandboxPodSpec) {
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  if (spec.milliCpuRequest) requests.cpu = `${spec.milliCpuRequest}m`;
  if (spec.milliCpuLimit) limits.cpu = `${spec.milliCpuLimit}m`;
  requests.memory = String(spec.memoryBytesRequest || spec.memoryBytesLimit);
  limits.memory = String(spec.memoryBytesLimit);
  if (spec.storageBytes) limits["ephemeral-storage"] = String(spec.storageBytes);
  if (spec.gpu > 0) limits[spec.gpuResource || defaultGpuResource] = String(spec.gpu);
  return { requests, limits };
}

/**
 * The Secret `engine-<uid>` holding the agent's configuration (`config`, token included), mounted
 * into the sandbox's pod; `owner` (the sandbox's Service) owns it, so it goes with the sandbox.
 */
export function agentConfigSecret(uid: string, namespace: string, config: string, owner?: Owner): V1Secret {
  const ownerReferences = ownerReferencesOf(owner);
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: sandboxObjectName(uid),
      namespace,
      labels: sandboxLabels(uid),
      ...(ownerReferences ? { ownerReferences } : {}),
    },
    type: "Opaque",
    immutable: true,
    data: { [agentConfigKey]: Buffer.from(config).toString("base64") },
  };
}

/** The Service the agent is reached at inside the cluster (port 80, `grpc`), owning the rest. */
export function sandboxService(uid: string, namespace: string): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: sandboxObjectName(uid), namespace, labels: sandboxLabels(uid) },
    spec: {
      type: "ClusterIP",
      selector: { "app.kubernetes.io/instance": uid },
      ports: [{ name: "grpc", port: 80, targetPort: agentPort, protocol: "TCP" }],
    },
  };
}

/** The metadata of a port's objects (its Service and its route): named and labelled after the port. */
function portMetadata(uid: string, port: number, namespace: string, owner?: Owner): V1ObjectMeta {
  const ownerReferences = ownerReferencesOf(owner);
  return {
    name: portObjectName(uid, port),
    namespace,
    labels: { ...sandboxLabels(uid), [portIdLabel]: String(port) },
    ...(ownerReferences ? { ownerReferences } : {}),
  };
}

/** A port's Service: the sandbox's port, under the same number, inside the cluster. */
export function portService(uid: string, port: number, namespace: string, owner?: Owner): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: portMetadata(uid, port, namespace, owner),
    spec: {
      type: "ClusterIP",
      selector: { "app.kubernetes.io/instance": uid },
      ports: [{ name: "http", port, targetPort: port, protocol: "TCP" }],
    },
  };
}

/** Where a public port's route attaches and what it matches: the Gateway, and the port's public URL. */
export interface PortRouteOptions {
  /** The Gateway (`name`, and `namespace` when not the sandboxes' own) the route attaches to. */
  readonly gateway?: { readonly name: string; readonly namespace?: string | undefined } | undefined;
  /** The port's public URL: its host becomes the route's hostname, its path the prefix stripped. */
  readonly publicUrl: string;
}

/** A Gateway API HTTPRoute, as a custom object (the client has no type for it). */
export interface HttpRoute {
  readonly apiVersion: string;
  readonly kind: "HTTPRoute";
  readonly metadata: NonNullable<V1Service["metadata"]>;
  readonly spec: Record<string, unknown>;
}

/** A public port's HTTPRoute: requests to its public URL go to its Service, the URL's path stripped. */
export function portRoute(
  uid: string,
  port: number,
  namespace: string,
  options: PortRouteOptions,
  owner?: Owner,
): HttpRoute {
  const url = new URL(options.publicUrl);
  const prefix = url.pathname.replace(/\/+$/, "") || "/";
  const gateway = options.gateway;
  return {
    apiVersion: `${gatewayGroup}/v1`,
    kind: "HTTPRoute",
    metadata: portMetadata(uid, port, namespace, owner),
    spec: {
      ...(gateway
        ? { parentRefs: [{ name: gateway.name, ...(gateway.namespace ? { namespace: gateway.namespace } : {}) }] }
        : {}),
      hostnames: [url.hostname],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: prefix } }],
          filters: [
            { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "" } } },
          ],
          backendRefs: [{ name: portObjectName(uid, port), port }],
        },
      ],
    },
  };
}

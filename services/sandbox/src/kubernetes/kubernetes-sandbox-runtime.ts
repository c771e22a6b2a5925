// Sandboxes as Kubernetes objects (docs/adr/0245): per sandbox a pod running its image with our
// agent, a Service owning everything else, and per port a Service and (public) an HTTPRoute, in
// one namespace. What the cluster holds is read from informers (a list, then a watch), never
// polled; every replica of the service sees the same objects, so nothing is pinned to one.
import { createOrRead, ignoreNotFound, managedBy, type PodPending } from "@aiem/kit/kubernetes";
import {
  ApiException,
  type CoreV1Event,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  makeInformer,
  type V1Pod,
  type V1Service,
} from "@kubernetes/client-node";
import {
  type AgentInjection,
  agentPort,
  appName,
  type HttpRoute,
  type PortRouteOptions,
  portObjectName,
  portRoute,
  portService,
  type SandboxPodSpec,
  sandboxObjectName,
  sandboxPod,
  sandboxService,
} from "./sandbox-objects.js";
import { type SandboxPodStatus, sandboxStatusOf } from "./sandbox-status.js";

export interface KubernetesSandboxRuntimeOptions {
  readonly config: KubeConfig;
  /** Where sandboxes' objects live (`AIEM_KUBERNETES_NAMESPACE`). */
  readonly namespace: string;
  readonly agent: AgentInjection;
  /** The secret each sandbox's agent asks of every request (it serves TCP in the pod), by sandbox uid. */
  readonly agentToken?: (uid: string) => Promise<string>;
  /** The Gateway public ports' HTTPRoutes attach to (`AIEM_KUBERNETES_GATEWAY`); none when unset. */
  readonly gateway?: PortRouteOptions["gateway"];
}

export interface KubernetesSandboxRuntime {
  /** Where sandboxes run: the cluster and namespace, the same for every replica. */
  readonly placement: string;
  /** Whether the cluster knows HTTPRoutes (the Gateway API's CRDs are installed). */
  readonly routes: boolean;
  /** Makes the sandbox's Service and pod; a pod that ended or was deleted is replaced. */
  start(spec: SandboxPodSpec): Promise<void>;
  status(uid: string): SandboxPodStatus;
  /** The agent's address in the cluster (the pod's IP), once the pod has one. */
  endpoint(uid: string): { host: string; port: number } | undefined;
  /** Deletes every object of the sandbox and resolves once they are gone. */
  remove(uid: string): Promise<void>;
  /** Makes a port's Service, and its HTTPRoute while `route` is given (public), deleting it otherwise. */
  ensurePort(uid: string, port: number, route: PortRouteOptions | undefined): Promise<void>;
  removePort(uid: string, port: number): Promise<void>;
  /** Whether the port's objects exist: its Service, and its HTTPRoute when it is public. */
  portReady(uid: string, port: number, isPublic: boolean): boolean;
  /** Calls `listener` with a sandbox's uid whenever one of its objects changes. */
  watch(listener: (uid: string) => void): () => void;
  close(): Promise<void>;
}

const selector = `app.kubernetes.io/managed-by=${managedBy},app.kubernetes.io/name=${appName}`;
const instanceLabel = "app.kubernetes.io/instance";
const gatewayGroup = "gateway.networking.k8s.io";

type Kind = "pod" | "service" | "route";
type Watched = V1Pod | V1Service | HttpRoute;

/** Starts the informers and resolves once their first list is in, so status() sees the cluster. */
export async function createKubernetesSandboxRuntime(
  options: KubernetesSandboxRuntimeOptions,
): Promise<KubernetesSandboxRuntime> {
  const { config, namespace, agent } = options;
  const core = config.makeApiClient(CoreV1Api);
  const custom = config.makeApiClient(CustomObjectsApi);
  const listRoutes = () =>
    custom.listNamespacedCustomObject({
      group: gatewayGroup,
      version: "v1",
      namespace,
      plural: "httproutes",
      labelSelector: selector,
    }) as Promise<KubernetesListObject<HttpRoute>>;
  const routes = await listRoutes().then(
    () => true,
    (error: unknown) => {
      // No Gateway API in this cluster: ports get their Services, and public ones no route.
      if (error instanceof ApiException && error.code === 404) return false;
      throw error;
    },
  );
  const pods = makeInformer<V1Pod>(
    config,
    `/api/v1/namespaces/${namespace}/pods`,
    () => core.listNamespacedPod({ namespace, labelSelector: selector }),
    selector,
  );
  const services = makeInformer<V1Service>(
    config,
    `/api/v1/namespaces/${namespace}/services`,
    () => core.listNamespacedService({ namespace, labelSelector: selector }),
    selector,
  );
  const routeInformer = routes
    ? makeInformer<HttpRoute>(
        config,
        `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/httproutes`,
        listRoutes,
        selector,
      )
    : undefined;
  const cached = (kind: Kind, name: string): Watched | undefined =>
    kind === "pod"
      ? pods.get(name, namespace)
      : kind === "service"
        ? services.get(name, namespace)
        : routeInformer?.get(name, namespace);

  const listeners = new Set<(uid: string) => void>();
  const notify = (object: Watched) => {
    const uid = object.metadata?.labels?.[instanceLabel];
    if (uid) for (const listener of listeners) listener(uid);
  };
  // Callers waiting for an object to be gone or seen, released by the informers' events.
  const waiters = new Map<string, (() => void)[]>();
  const release = (event: "gone" | "seen", kind: Kind) => (object: Watched) => {
    const key = `${event}/${kind}/${object.metadata?.name ?? ""}`;
    for (const resolve of waiters.get(key) ?? []) resolve();
    waiters.delete(key);
  };
  const waitFor = (key: string): Promise<void> =>
    new Promise((resolve) => waiters.set(key, [...(waiters.get(key) ?? []), resolve]));
  const informers: [Kind, ReturnType<typeof makeInformer<Watched>>][] = [
    ["pod", pods as ReturnType<typeof makeInformer<Watched>>],
    ["service", services as ReturnType<typeof makeInformer<Watched>>],
    ...(routeInformer
      ? [
          ["route", routeInformer as ReturnType<typeof makeInformer<Watched>>] as [
            Kind,
            ReturnType<typeof makeInformer<Watched>>,
          ],
        ]
      : []),
  ];
  for (const [kind, informer] of informers) {
    informer.on("delete", release("gone", kind));
    informer.on("add", release("seen", kind));
    informer.on("update", release("seen", kind));
    for (const verb of ["add", "update", "delete"] as const) informer.on(verb, notify);
  }
  // Warnings a kubelet recorded about a pod (FailedMount, FailedCreatePodSandBox...), the latest
  // per pod: why a scheduled pod still waits when none of its containers says.
  const events = makeInformer<CoreV1Event>(config, `/api/v1/namespaces/${namespace}/events`, () =>
    core.listNamespacedEvent({ namespace }),
  );
  const warnings = new Map<string, PodPending>();
  const onEvent = (event: CoreV1Event) => {
    const { uid, name } = event.involvedObject;
    if (event.involvedObject.kind !== "Pod" || event.type !== "Warning" || !uid || !event.reason) return;
    if (event.reason === "FailedScheduling") return;
    const pod = name ? pods.get(name, namespace) : undefined;
    if (pod?.metadata?.uid !== uid) return;
    warnings.set(uid, { reason: event.reason, message: event.message ?? "" });
    notify(pod);
  };
  events.on("add", onEvent);
  events.on("update", onEvent);
  pods.on("delete", (pod) => warnings.delete(pod.metadata?.uid ?? ""));
  const warningOf = (pod: V1Pod) => warnings.get(pod.metadata?.uid ?? "");
  await Promise.all([pods.start(), services.start(), events.start(), routeInformer?.start()]);

  const gone = (kind: Kind, name: string): Promise<void> =>
    cached(kind, name) ? waitFor(`gone/${kind}/${name}`) : Promise.resolve();
  const seen = (kind: Kind, name: string): Promise<void> =>
    cached(kind, name) ? Promise.resolve() : waitFor(`seen/${kind}/${name}`);
  const objectsOf = <T extends Watched>(list: readonly T[], uid: string) =>
    list.filter((o) => o.metadata?.labels?.[instanceLabel] === uid);

  /** The sandbox's Service, made or read: it owns the pod and the ports' objects. */
  async function owningService(uid: string) {
    const name = sandboxObjectName(uid);
    const service = (await createOrRead(
      () => core.createNamespacedService({ namespace, body: sandboxService(uid, namespace) }),
      () => core.readNamespacedService({ namespace, name }),
    )) as V1Service;
    return { kind: "Service", name, uid: service.metadata?.uid ?? "" };
  }

  return {
    placement: `kubernetes:${config.getCurrentCluster()?.server ?? "cluster"}/${namespace}`,
    routes,

    async start(spec) {
      const name = sandboxObjectName(spec.uid);
      const existing = pods.get(name, namespace);
      const phase = existing?.status?.phase;
      if (existing && !existing.metadata?.deletionTimestamp && phase !== "Failed" && phase !== "Succeeded") return;
      const owner = await owningService(spec.uid);
      const token = await options.agentToken?.(spec.uid);
      const injected = token ? { ...agent, config: JSON.stringify({ ...JSON.parse(agent.config), token }) } : agent;
      if (existing && !existing.metadata?.deletionTimestamp)
        await ignoreNotFound(core.deleteNamespacedPod({ namespace, name }));
      await gone("pod", name);
      await createOrRead(() =>
        core.createNamespacedPod({ namespace, body: sandboxPod(spec, namespace, injected, owner) }),
      );
      await seen("pod", name);
    },

    status(uid) {
      const name = sandboxObjectName(uid);
      return sandboxStatusOf(pods.get(name, namespace), services.get(name, namespace) !== undefined, warningOf);
    },

    endpoint(uid) {
      const pod = pods.get(sandboxObjectName(uid), namespace);
      const host = pod?.metadata?.deletionTimestamp ? undefined : pod?.status?.podIP;
      return host ? { host, port: agentPort } : undefined;
    },

    async remove(uid) {
      const name = sandboxObjectName(uid);
      const dependents: [Kind, string][] = [
        ...objectsOf(pods.list(namespace), uid).map((o) => ["pod", o.metadata?.name ?? ""] as [Kind, string]),
        ...objectsOf(services.list(namespace), uid).map((o) => ["service", o.metadata?.name ?? ""] as [Kind, string]),
        ...objectsOf(routeInformer?.list(namespace) ?? [], uid).map(
          (o) => ["route", o.metadata?.name ?? ""] as [Kind, string],
        ),
      ];
      // The Service owns the rest; the pod is deleted directly too, so that it does not wait for
      // the garbage collector, and so that a sandbox whose Service is gone loses its pod as well.
      await ignoreNotFound(core.deleteNamespacedPod({ namespace, name }));
      await ignoreNotFound(core.deleteNamespacedService({ namespace, name, propagationPolicy: "Foreground" }));
      await Promise.all(dependents.map(([kind, object]) => gone(kind, object)));
    },

    async ensurePort(uid, port, route) {
      const name = portObjectName(uid, port);
      const owner = await owningService(uid);
      await createOrRead(() =>
        core.createNamespacedService({ namespace, body: portService(uid, port, namespace, owner) }),
      );
      if (!routes) return;
      if (route) {
        const body = portRoute(uid, port, namespace, { ...route, gateway: options.gateway }, owner);
        await createOrRead(() =>
          custom.createNamespacedCustomObject({
            group: gatewayGroup,
            version: "v1",
            namespace,
            plural: "httproutes",
            body,
          }),
        );
        await seen("route", name);
      } else {
        await ignoreNotFound(
          custom.deleteNamespacedCustomObject({
            group: gatewayGroup,
            version: "v1",
            namespace,
            plural: "httproutes",
            name,
          }),
        );
        await gone("route", name);
      }
      await seen("service", name);
    },

    async removePort(uid, port) {
      const name = portObjectName(uid, port);
      await ignoreNotFound(core.deleteNamespacedService({ namespace, name }));
      if (routes) {
        await ignoreNotFound(
          custom.deleteNamespacedCustomObject({
            group: gatewayGroup,
            version: "v1",
            namespace,
            plural: "httproutes",
            name,
          }),
        );
      }
      await Promise.all([gone("service", name), gone("route", name)]);
    },

    portReady(uid, port, isPublic) {
      const name = portObjectName(uid, port);
      return cached("service", name) !== undefined && (!isPublic || !routes || cached("route", name) !== undefined);
    },

    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async close() {
      listeners.clear();
      await Promise.all([pods.stop(), services.stop(), events.stop(), routeInformer?.stop()]);
    },
  };
}

// Sandboxes as Kubernetes objects (docs/adr/0245): per sandbox a pod running its image with our
// agent, a Secret with the agent's configuration, a Service owning everything else, and per port
// a Service and (public) an HTTPRoute, in one namespace. What the cluster holds is read from informers (a list, then a watch), never
// polled; every replica of the service sees the same objects, so nothing is pinned to one.
import { createOrRead, ignoreNotFound, watchPodWarnings } from "@aiem/kit/kubernetes";
import { CoreV1Api, type KubeConfig } from "@kubernetes/client-node";
import { createHttpRoutes } from "./http-routes.js";
import { createObjectChanges } from "./object-changes.js";
import { createOwningService } from "./owning-service.js";
import { createSandboxInformers, sandboxSelector } from "./sandbox-informers.js";
import {
  type AgentInjection,
  agentConfigSecret,
  agentPort,
  type PortRouteOptions,
  type SandboxPodSpec,
  sandboxObjectName,
  sandboxPod,
} from "./sandbox-objects.js";
import { createSandboxPortObjects, type SandboxPortObjects } from "./sandbox-port-objects.js";
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

export interface KubernetesSandboxRuntime extends SandboxPortObjects {
  /** Where sandboxes run: the cluster and namespace, the same for every replica. */
  readonly placement: string;
  /** Whether the cluster knows HTTPRoutes (the Gateway API's CRDs are installed). */
  readonly routes: boolean;
  /**
   * Makes the sandbox's Service and pod; a pod that ended or was deleted is replaced. True when
   * this call made the pod; false when one was there (known, or found on creating it).
   */
  start(spec: SandboxPodSpec): Promise<boolean>;
  status(uid: string): SandboxPodStatus;
  /** The agent's address in the cluster (the pod's IP), once the pod has one. */
  endpoint(uid: string): { host: string; port: number } | undefined;
  /** Deletes every object of the sandbox and resolves once they are gone. */
  remove(uid: string): Promise<void>;
  /** Calls `listener` with a sandbox's uid whenever one of its objects changes. */
  watch(listener: (uid: string) => void): () => void;
  close(): Promise<void>;
}

/** Starts the informers and resolves once their first list is in, so status() sees the cluster. */
export async function createKubernetesSandboxRuntime(
  options: KubernetesSandboxRuntimeOptions,
): Promise<KubernetesSandboxRuntime> {
  const { config, namespace, agent } = options;
  const core = config.makeApiClient(CoreV1Api);
  const httpRoutes = createHttpRoutes(config, namespace, sandboxSelector);
  const routes = await httpRoutes.installed();
  const routable = routes ? httpRoutes : undefined;
  const informers = createSandboxInformers(config, namespace, core, routable);
  const { pods, services } = informers;
  const changes = createObjectChanges(informers);
  const warnings = watchPodWarnings({ config, namespace, core, pods, onWarning: changes.notify });
  await Promise.all([informers.start(), warnings.start()]);
  const owningService = createOwningService(core, namespace);
  const ports = createSandboxPortObjects({
    core,
    namespace,
    httpRoutes: routable,
    gateway: options.gateway,
    informers,
    changes,
    owningService,
  });

  return {
    placement: `kubernetes:${config.getCurrentCluster()?.server ?? "cluster"}/${namespace}`,
    routes,
    ...ports,

    async start(spec) {
      const name = sandboxObjectName(spec.uid);
      const existing = pods.get(name, namespace);
      const phase = existing?.status?.phase;
      if (existing && !existing.metadata?.deletionTimestamp && phase !== "Failed" && phase !== "Succeeded")
        return false;
      const owner = await owningService(spec.uid);
      const token = await options.agentToken?.(spec.uid);
      const config = token ? JSON.stringify({ ...JSON.parse(agent.config), token }) : agent.config;
      // Made once per sandbox: its content follows from the sandbox's uid (the token) and the
      // service's settings, so a pod made again finds the one made before.
      await createOrRead(() =>
        core.createNamespacedSecret({ namespace, body: agentConfigSecret(spec.uid, namespace, config, owner) }),
      );
      if (existing && !existing.metadata?.deletionTimestamp)
        await ignoreNotFound(core.deleteNamespacedPod({ namespace, name }));
      // Only the pod this start found is waited out: one that appeared since is another
      // replica's, made for this very sandbox, and is found below instead of waited for forever.
      if (existing) await changes.gone("pod", name, existing.metadata?.uid);
      const made = await createOrRead(() =>
        core.createNamespacedPod({ namespace, body: sandboxPod(spec, namespace, agent, owner) }),
      );
      await changes.seen("pod", name);
      return made !== undefined;
    },

    status(uid) {
      const name = sandboxObjectName(uid);
      return sandboxStatusOf(pods.get(name, namespace), services.get(name, namespace) !== undefined, warnings.of);
    },

    endpoint(uid) {
      const pod = pods.get(sandboxObjectName(uid), namespace);
      const host = pod?.metadata?.deletionTimestamp ? undefined : pod?.status?.podIP;
      return host ? { host, port: agentPort } : undefined;
    },

    async remove(uid) {
      const name = sandboxObjectName(uid);
      const dependents = informers.objectsOf(uid);
      // The Service owns the rest; the pod is deleted directly too, so that it does not wait for
      // the garbage collector, and so that a sandbox whose Service is gone loses its pod as well.
      await ignoreNotFound(core.deleteNamespacedPod({ namespace, name }));
      await ignoreNotFound(core.deleteNamespacedService({ namespace, name, propagationPolicy: "Foreground" }));
      await Promise.all(dependents.map(([kind, object]) => changes.gone(kind, object)));
    },

    watch: changes.watch,

    async close() {
      changes.close();
      await Promise.all([informers.stop(), warnings.stop()]);
    },
  };
}

// What the sandbox service's Kubernetes suites share: whether the control plane is built (they
// skip, saying why, where it is not), a real cluster with a namespace and the HTTPRoute CRD, and
// waits on what the runtime reports, by its watch rather than polling.
import { fileURLToPath } from "node:url";
import { waitFor } from "@aiem/kit/events/testing";
import { kubernetesUnavailable, startTestCluster, type TestCluster, type TestClusterOptions } from "@aiem/kit/testing";
import { CoreV1Api, CustomObjectsApi, KubeConfig } from "@kubernetes/client-node";
import type { KubernetesSandboxRuntime } from "../kubernetes/kubernetes-sandbox-runtime.js";
import type { SandboxPodStatus } from "../kubernetes/sandbox-status.js";

/** Why the Kubernetes suites cannot run here (logged once per file), or undefined when they can. */
export function kubernetesSkipReason(suite: string): string | undefined {
  const reason = kubernetesUnavailable();
  if (reason) console.warn(`${suite}: skipped, ${reason}`);
  return reason;
}

export interface SandboxClusterFixture {
  readonly cluster: TestCluster;
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  stop(): Promise<void>;
}

/** A test cluster with `namespace` ready for pods and, unless `routes` is false, the HTTPRoute CRD installed. */
export async function startSandboxCluster(
  namespace: string,
  options: TestClusterOptions & { readonly routes?: boolean } = {},
): Promise<SandboxClusterFixture> {
  const cluster = await startTestCluster(options);
  try {
    await cluster.createNamespace(namespace);
    if (options.routes !== false) {
      cluster.kubectl(["apply", "-f", fileURLToPath(new URL("./httproute-crd.yaml", import.meta.url))]);
      cluster.kubectl([
        "wait",
        "--for=condition=Established",
        "crd/httproutes.gateway.networking.k8s.io",
        "--timeout=60s",
      ]);
    }
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  const config = new KubeConfig();
  config.loadFromFile(cluster.kubeconfigPath);
  const custom = config.makeApiClient(CustomObjectsApi);
  if (options.routes !== false) {
    // An established CRD still answers 429 ("storage is (re)initializing") for a moment.
    const listed = () =>
      custom
        .listNamespacedCustomObject({
          group: "gateway.networking.k8s.io",
          version: "v1",
          namespace,
          plural: "httproutes",
        })
        .then(
          () => true,
          () => false,
        );
    await waitFor(listed, 30_000, "HTTPRoutes to be served");
  }
  return { cluster, config, core: config.makeApiClient(CoreV1Api), custom, stop: () => cluster.stop() };
}

/** Resolves once the sandbox's status satisfies `done`, checked now and on every change the runtime reports. */
export function untilSandbox(
  runtime: KubernetesSandboxRuntime,
  uid: string,
  done: (status: SandboxPodStatus) => boolean,
): Promise<SandboxPodStatus> {
  return new Promise((resolve) => {
    const check = () => {
      const status = runtime.status(uid);
      if (!done(status)) return false;
      unwatch();
      resolve(status);
      return true;
    };
    const unwatch = runtime.watch((changed) => {
      if (changed === uid) check();
    });
    check();
  });
}

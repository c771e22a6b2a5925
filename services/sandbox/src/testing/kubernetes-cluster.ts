// What the sandbox service's Kubernetes suites share: a real cluster with a namespace and the
// HTTPRoute CRD, and waits on what the runtime reports, by its watch rather than polling.
import { fileURLToPath } from "node:url";
import { waitFor } from "@aiem/kit/events/testing";
import { type NamespaceCluster, startNamespaceCluster, type TestClusterOptions } from "@aiem/kit/testing";
import { CustomObjectsApi } from "@kubernetes/client-node";
import type { KubernetesSandboxRuntime } from "../kubernetes/kubernetes-sandbox-runtime.js";
import type { SandboxPodStatus } from "../kubernetes/sandbox-status.js";

export interface SandboxClusterFixture extends NamespaceCluster {
  readonly custom: CustomObjectsApi;
  stop(): Promise<void>;
}

/** A test cluster with `namespace` ready for pods and, unless `routes` is false, the HTTPRoute CRD installed. */
export async function startSandboxCluster(
  namespace: string,
  options: TestClusterOptions & { readonly routes?: boolean } = {},
): Promise<SandboxClusterFixture> {
  const started = await startNamespaceCluster(namespace, options, (cluster) => {
    if (options.routes === false) return;
    cluster.kubectl(["apply", "-f", fileURLToPath(new URL("./httproute-crd.yaml", import.meta.url))]);
    cluster.kubectl([
      "wait",
      "--for=condition=Established",
      "crd/httproutes.gateway.networking.k8s.io",
      "--timeout=60s",
    ]);
  });
  const custom = started.config.makeApiClient(CustomObjectsApi);
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
  return { ...started, custom, stop: () => started.cluster.stop() };
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

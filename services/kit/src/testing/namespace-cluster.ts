// What every Kubernetes suite starts with: whether the control plane is built (the suites skip,
// saying why, where it is not), and a real cluster with a namespace ready for pods and the
// admin's clients for it.
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { kubernetesUnavailable, startTestCluster, type TestCluster, type TestClusterOptions } from "./test-cluster.js";

/** Why the Kubernetes suites cannot run here (logged once per file), or undefined when they can. */
export function kubernetesSkipReason(suite: string): string | undefined {
  const reason = kubernetesUnavailable();
  if (reason) console.warn(`${suite}: skipped, ${reason}`);
  return reason;
}

export interface NamespaceCluster {
  readonly cluster: TestCluster;
  /** The admin kubeconfig, loaded. */
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly namespace: string;
}

/**
 * Starts a test cluster, makes `namespace` and runs `prepare` (what else the suites need installed);
 * the cluster is stopped again when either fails.
 */
export async function startNamespaceCluster(
  namespace: string,
  options: TestClusterOptions = {},
  prepare?: (cluster: TestCluster) => Promise<void> | void,
): Promise<NamespaceCluster> {
  const cluster = await startTestCluster(options);
  try {
    await cluster.createNamespace(namespace);
    await prepare?.(cluster);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  const config = new KubeConfig();
  config.loadFromFile(cluster.kubeconfigPath);
  return { cluster, config, core: config.makeApiClient(CoreV1Api), namespace };
}

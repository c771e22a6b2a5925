// The test Kubernetes control plane (`startTestCluster`, kwok nodes) for a test that is not
// written in TypeScript: the official Python client's Kubernetes test starts this, reads one JSON
// line from stdout and stops it by closing stdin (or with SIGTERM). The line says where the
// cluster is ({"kubeconfig", "server", "kubectl", "namespace", "nodes"}) or, where the binaries
// are not built, {"unavailable": why}; where AIEM_REQUIRE_KUBERNETES says the Kubernetes suites
// must run, a missing control plane is an error instead (exit 1).
//
//   node --import tsx scripts/test-cluster/main.ts --namespace workloads
//
// The namespace is ready for pods and the HTTPRoute CRD is installed, as the sandbox suites have it.
import { parseArgs } from "node:util";
import { kubernetesArtifactPath, kubernetesCacheDir, kubernetesUnavailable } from "@aiem/kit/testing";
import { startSandboxCluster } from "../../services/sandbox/src/testing/kubernetes-cluster.js";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      namespace: { type: "string", default: "workloads" },
      volumes: { type: "string", default: "8" },
    },
  });
  const unavailable = kubernetesUnavailable();
  if (unavailable) {
    process.stdout.write(`${JSON.stringify({ unavailable })}\n`);
    return 0;
  }
  // Until the cluster is up, a stop request exits at once: the cluster's exit hook kills what
  // it started. Once it is up, the cluster stops in order and its directory goes.
  let stop = (): Promise<void> => process.exit(143);
  const stopped = new Promise<void>((resolve) => {
    const end = () => void stop().then(resolve);
    process.once("SIGTERM", end);
    process.once("SIGINT", end);
    process.stdin.once("end", end);
    process.stdin.resume();
  });
  const namespace = values.namespace;
  // Pods get addresses off loopback: the official assertions read a port's Endpoints, and the
  // apiserver refuses loopback addresses in them. Nothing here stands in for a pod's container.
  const { cluster } = await startSandboxCluster(namespace, {
    volumes: Number(values.volumes),
    podCidr: "10.244.0.0/24",
  });
  let stopping: Promise<void> | undefined;
  stop = () => {
    stopping ??= cluster.stop();
    return stopping;
  };
  process.stdout.write(
    `${JSON.stringify({
      kubeconfig: cluster.kubeconfigPath,
      server: cluster.server,
      kubectl: kubernetesArtifactPath(kubernetesCacheDir(), "kubectl"),
      namespace,
      nodes: cluster.nodeNames,
    })}\n`,
  );
  await stopped;
  return 0;
}

main().then(
  (code) => {
    process.exit(code);
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  },
);

// A real Kubernetes control plane for one test file: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok on free loopback ports in a temporary directory, with simulated nodes
// that kwok keeps Ready and whose pods it makes Running (or, asked by an annotation, fails as a
// kubelet would: test-cluster-stages.ts). Built by `npm run setup -- --kubernetes`
// (docs/adr/0160); suites skip with `kubernetesUnavailable()` as their reason when it is missing.
import { execFileSync } from "node:child_process";
import { randomInt } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type KubernetesArtifact,
  kubernetesArtifactPath,
  kubernetesCacheDir,
  missingKubernetesArtifacts,
} from "./kubernetes-binaries.js";
import { startApiserver, startControllers, startEtcd, type ComponentLayout } from "./test-cluster-components.js";
import { nodeManifest, storageClassManifest, volumeManifest } from "./test-cluster-manifests.js";
import { createCertificates, kubeconfigText } from "./test-cluster-pki.js";
import { createProcessGroup, freePorts, stopProcesses, waitUntilReady } from "./test-cluster-processes.js";

export interface TestNode {
  readonly name: string;
  /** Allocatable resources; defaults to 8 CPUs, 32Gi of memory, 100Gi of ephemeral storage and 110 pods, no GPU. */
  readonly allocatable?: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
}

export interface TestClusterOptions {
  /** The simulated nodes; two plain ones by default. */
  readonly nodes?: readonly TestNode[];
  /**
   * Persistent volumes of 100Gi waiting in the default storage class `aiem-test`, one per claim
   * the tests make (nothing provisions volumes here); 16 by default.
   */
  readonly volumes?: number;
  /** Where pods get their addresses; a random loopback /24 by default (see TestCluster.podCidr). */
  readonly podCidr?: string;
}

export interface TestCluster {
  /** A kubeconfig file with cluster-admin rights (O=system:masters). */
  readonly kubeconfigPath: string;
  /** The apiserver's URL, `https://127.0.0.1:<port>`. */
  readonly server: string;
  readonly nodeNames: readonly string[];
  /**
   * The pods' addresses (`127.a.b.0/24`). kwok runs no containers; on loopback, a test can stand in
   * for a pod's container by listening on the pod's IP (every 127.x address is local on Linux), and
   * the random /24 keeps clusters of suites running at once apart.
   */
  readonly podCidr: string;
  /** Runs the cluster's kubectl with its kubeconfig; returns stdout. */
  kubectl(args: readonly string[], input?: string): string;
  /** Creates a namespace and returns once pods can be made in it (its default ServiceAccount exists). */
  createNamespace(name: string): Promise<void>;
  /** Stops every process and deletes the directory. */
  stop(): Promise<void>;
}

/** Whether a suite that needs the control plane must fail rather than skip: `AIEM_REQUIRE_KUBERNETES=1` (CI). */
export function kubernetesRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.AIEM_REQUIRE_KUBERNETES;
  return value === "1" || value === "true";
}

/**
 * Why the Kubernetes suites cannot run here, or undefined when they can. Where they are required
 * (`kubernetesRequired`), a missing control plane throws instead: every suite asks here before it
 * decides to skip, so none is skipped quietly where CI built the binaries to run it.
 */
export function kubernetesUnavailable(
  cacheDir = kubernetesCacheDir(),
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const missing = missingKubernetesArtifacts(cacheDir);
  if (missing.length === 0) return undefined;
  const reason = `Kubernetes binaries not built (${missing.join(", ")} missing in ${cacheDir}); run: npm run setup -- --kubernetes`;
  if (kubernetesRequired(env)) {
    throw new Error(`AIEM_REQUIRE_KUBERNETES is set, so the Kubernetes suites may not skip: ${reason}`);
  }
  return reason;
}

const defaultNodes: readonly TestNode[] = [{ name: "kwok-node-0" }, { name: "kwok-node-1" }];
const startTimeoutMs = 120_000;

export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const cacheDir = kubernetesCacheDir();
  const reason = kubernetesUnavailable(cacheDir);
  if (reason) throw new Error(reason);
  const bin = (name: KubernetesArtifact) => kubernetesArtifactPath(cacheDir, name);
  const dir = mkdtempSync(join(tmpdir(), "aiem-k8s-"));
  const group = createProcessGroup(dir);
  const killAll = () => group.killAll();
  // A test process that dies without stop() must not leave a control plane behind.
  process.once("exit", killAll);
  try {
    const pki = createCertificates(dir);
    const layout: ComponentLayout = { group, bin, dir, pki };
    const [etcdClient, etcdPeer, apiserverPort] = await freePorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const server = `https://127.0.0.1:${apiserverPort}`;
    const kubeconfigPath = join(dir, "admin.kubeconfig");
    writeFileSync(kubeconfigPath, kubeconfigText(server, pki));
    startEtcd(layout, etcdUrl, etcdPeer!);
    startApiserver(layout, etcdUrl, apiserverPort!);
    await waitUntilReady(`${server}/readyz`, pki, startTimeoutMs, () => group.logTail("kube-apiserver"));
    const podCidr = options.podCidr ?? `127.${randomInt(64, 255)}.${randomInt(0, 256)}.0/24`;
    startControllers(layout, kubeconfigPath, podCidr);
    const kubectl = (args: readonly string[], input?: string): string =>
      execFileSync(bin("kubectl"), [`--kubeconfig=${kubeconfigPath}`, ...args], {
        encoding: "utf8",
        ...(input === undefined ? {} : { input }),
        stdio: ["pipe", "pipe", "pipe"],
      });
    const nodes = options.nodes ?? defaultNodes;
    const volumes = Array.from({ length: options.volumes ?? 16 }, (_, i) => volumeManifest(i));
    kubectl(["apply", "-f", "-"], [...nodes.map(nodeManifest), storageClassManifest, ...volumes].join("\n---\n"));
    kubectl(["wait", "--for=condition=Ready", "node", "--all", `--timeout=${startTimeoutMs / 1000}s`]);
    let stopped = false;
    return {
      kubeconfigPath,
      server,
      nodeNames: nodes.map((n) => n.name),
      podCidr,
      kubectl,
      async createNamespace(name) {
        kubectl(["create", "namespace", name]);
        kubectl(["wait", "--for=create", "-n", name, "serviceaccount/default", "--timeout=60s"]);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        process.removeListener("exit", killAll);
        await stopProcesses(group.processes);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    process.removeListener("exit", killAll);
    await stopProcesses(group.processes);
    const logs = group.processes.map((p) => `--- ${p.name}\n${group.logTail(p.name)}`).join("\n");
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the test cluster did not start: ${error instanceof Error ? error.message : error}\n${logs}`);
  }
}

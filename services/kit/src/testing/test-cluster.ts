// A real Kubernetes control plane for one test file: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok on free loopback ports in a temporary directory, with simulated nodes
// that kwok keeps Ready and whose pods it makes Running (or, asked by an annotation, fails as a
// kubelet would: test-cluster-stages.ts). Built by `npm run setup -- --kubernetes`
// (docs/adr/0160); suites skip with `kubernetesUnavailable()` as their reason when it is missing.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type KubernetesArtifact,
  kubernetesArtifactPath,
  kubernetesCacheDir,
  missingKubernetesArtifacts,
} from "./kubernetes-binaries.js";
import { testClusterStages } from "./test-cluster-stages.js";

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
}

export interface TestCluster {
  /** A kubeconfig file with cluster-admin rights (O=system:masters). */
  readonly kubeconfigPath: string;
  /** The apiserver's URL, `https://127.0.0.1:<port>`. */
  readonly server: string;
  readonly nodeNames: readonly string[];
  /** Runs the cluster's kubectl with its kubeconfig; returns stdout. */
  kubectl(args: readonly string[], input?: string): string;
  /** Creates a namespace and returns once pods can be made in it (its default ServiceAccount exists). */
  createNamespace(name: string): Promise<void>;
  /** Stops every process and deletes the directory. */
  stop(): Promise<void>;
}

/** Why the Kubernetes suites cannot run here, or undefined when they can. */
export function kubernetesUnavailable(cacheDir = kubernetesCacheDir()): string | undefined {
  const missing = missingKubernetesArtifacts(cacheDir);
  if (missing.length === 0) return undefined;
  return `Kubernetes binaries not built (${missing.join(", ")} missing in ${cacheDir}); run: npm run setup -- --kubernetes`;
}

const defaultNodes: readonly TestNode[] = [{ name: "kwok-node-0" }, { name: "kwok-node-1" }];
const startTimeoutMs = 120_000;

export async function startTestCluster(options: TestClusterOptions = {}): Promise<TestCluster> {
  const cacheDir = kubernetesCacheDir();
  const reason = kubernetesUnavailable(cacheDir);
  if (reason) throw new Error(reason);
  const bin = (name: KubernetesArtifact) => kubernetesArtifactPath(cacheDir, name);
  const dir = mkdtempSync(join(tmpdir(), "aiem-k8s-"));
  const processes: { name: string; child: ChildProcess }[] = [];
  const killAll = () => {
    for (const { child } of processes) child.kill("SIGKILL");
  };
  // A test process that dies without stop() must not leave a control plane behind.
  process.once("exit", killAll);

  const start = (name: string, command: string, args: readonly string[]): void => {
    const log = openSync(join(dir, `${name}.log`), "a");
    const child = spawn(command, args, { stdio: ["ignore", log, log] });
    processes.push({ name, child });
  };
  const logTail = (name: string) => {
    try {
      return readFileSync(join(dir, `${name}.log`), "utf8")
        .split("\n")
        .slice(-15)
        .join("\n");
    } catch {
      return "(no log)";
    }
  };

  try {
    const pki = createCertificates(dir);
    const [etcdClient, etcdPeer, apiserverPort] = await freePorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const server = `https://127.0.0.1:${apiserverPort}`;
    const kubeconfigPath = join(dir, "admin.kubeconfig");
    writeFileSync(kubeconfigPath, kubeconfigText(server, pki));

    start("etcd", bin("etcd"), [
      "--name=test",
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
      `--initial-cluster=test=http://127.0.0.1:${etcdPeer}`,
      // Test data is thrown away; fsync would only slow every write.
      "--unsafe-no-fsync",
    ]);
    start("kube-apiserver", bin("kube-apiserver"), [
      `--etcd-servers=${etcdUrl}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${apiserverPort}`,
      "--advertise-address=127.0.0.1",
      "--endpoint-reconciler-type=none",
      `--tls-cert-file=${pki.apiserverCert}`,
      `--tls-private-key-file=${pki.apiserverKey}`,
      `--client-ca-file=${pki.caCert}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      `--service-account-key-file=${pki.saPublic}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      "--service-cluster-ip-range=10.96.0.0/16",
      "--authorization-mode=RBAC",
      "--allow-privileged=true",
    ]);
    await waitUntilReady(`${server}/readyz`, pki, startTimeoutMs, () => logTail("kube-apiserver"));

    const componentFlags = [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      "--leader-elect=false",
      // No health endpoints: nothing here reads them, and no port can collide.
      "--secure-port=0",
    ];
    start("kube-controller-manager", bin("kube-controller-manager"), [
      ...componentFlags,
      `--service-account-private-key-file=${pki.saKey}`,
      `--root-ca-file=${pki.caCert}`,
      `--cluster-signing-cert-file=${pki.caCert}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      "--use-service-account-credentials=true",
      "--controllers=*",
    ]);
    start("kube-scheduler", bin("kube-scheduler"), componentFlags.slice(0, 5));
    const stagesPath = join(dir, "kwok-stages.yaml");
    writeFileSync(stagesPath, testClusterStages(readFileSync(bin("kwok-stages"), "utf8")));
    start("kwok", bin("kwok"), [
      `--kubeconfig=${kubeconfigPath}`,
      `--config=${stagesPath}`,
      "--manage-all-nodes=false",
      "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
      "--cidr=10.244.0.0/24",
      "--node-ip=10.0.0.1",
    ]);

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
      kubectl,
      async createNamespace(name) {
        kubectl(["create", "namespace", name]);
        kubectl(["wait", "--for=create", "-n", name, "serviceaccount/default", "--timeout=60s"]);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        process.removeListener("exit", killAll);
        await stopProcesses(processes);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    process.removeListener("exit", killAll);
    await stopProcesses(processes);
    const logs = processes.map((p) => `--- ${p.name}\n${logTail(p.name)}`).join("\n");
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the test cluster did not start: ${error instanceof Error ? error.message : error}\n${logs}`);
  }
}

interface Pki {
  readonly caCert: string;
  readonly caKey: string;
  readonly apiserverCert: string;
  readonly apiserverKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  readonly saKey: string;
  readonly saPublic: string;
}

function createCertificates(dir: string): Pki {
  const path = (name: string) => join(dir, name);
  const openssl = (args: readonly string[]) => execFileSync("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
  const key = (name: string) =>
    openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path(name)]);
  key("ca.key");
  openssl([
    "req",
    "-x509",
    "-new",
    "-key",
    path("ca.key"),
    "-subj",
    "/CN=aiem-test-ca",
    "-days",
    "2",
    "-out",
    path("ca.crt"),
  ]);
  const sign = (name: string, subject: string, extensions: readonly string[]) => {
    key(`${name}.key`);
    openssl(["req", "-new", "-key", path(`${name}.key`), "-subj", subject, "-out", path(`${name}.csr`)]);
    writeFileSync(path(`${name}.ext`), `${extensions.join("\n")}\n`);
    openssl([
      "x509",
      "-req",
      "-in",
      path(`${name}.csr`),
      "-CA",
      path("ca.crt"),
      "-CAkey",
      path("ca.key"),
      "-CAcreateserial",
      "-days",
      "2",
      "-extfile",
      path(`${name}.ext`),
      "-out",
      path(`${name}.crt`),
    ]);
  };
  sign("apiserver", "/CN=kube-apiserver", [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=serverAuth",
    "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc",
  ]);
  // O=system:masters is cluster-admin; the controllers use it too, for simplicity.
  sign("admin", "/O=system:masters/CN=admin", [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=clientAuth",
  ]);
  openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path("sa.key")]);
  openssl(["pkey", "-in", path("sa.key"), "-pubout", "-out", path("sa.pub")]);
  return {
    caCert: path("ca.crt"),
    caKey: path("ca.key"),
    apiserverCert: path("apiserver.crt"),
    apiserverKey: path("apiserver.key"),
    adminCert: path("admin.crt"),
    adminKey: path("admin.key"),
    saKey: path("sa.key"),
    saPublic: path("sa.pub"),
  };
}

function kubeconfigText(server: string, pki: Pki): string {
  const base64 = (file: string) => readFileSync(file).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${base64(pki.caCert)}`,
    "users:",
    "- name: admin",
    "  user:",
    `    client-certificate-data: ${base64(pki.adminCert)}`,
    `    client-key-data: ${base64(pki.adminKey)}`,
    "contexts:",
    "- name: test",
    "  context: {cluster: test, user: admin}",
    "current-context: test",
    "",
  ].join("\n");
}

function nodeManifest(node: TestNode): string {
  // Every real node has ephemeral storage; pods with a limit on it (sandboxes) are placed by it.
  const allocatable = { cpu: "8", memory: "32Gi", "ephemeral-storage": "100Gi", pods: "110", ...node.allocatable };
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: node.name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
        ...node.labels,
      },
    },
    status: { allocatable, capacity: allocatable },
  });
}

const storageClassManifest = JSON.stringify({
  apiVersion: "storage.k8s.io/v1",
  kind: "StorageClass",
  metadata: { name: "aiem-test", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
  provisioner: "kubernetes.io/no-provisioner",
  volumeBindingMode: "Immediate",
  allowVolumeExpansion: true,
});

function volumeManifest(index: number): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: `aiem-test-${index}` },
    spec: {
      capacity: { storage: "100Gi" },
      accessModes: ["ReadWriteOnce"],
      storageClassName: "aiem-test",
      persistentVolumeReclaimPolicy: "Retain",
      // Never mounted: kwok runs no containers.
      hostPath: { path: `/nonexistent/aiem-test-${index}` },
    },
  });
}

async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<import("node:net").Server>((resolve, reject) => {
          const server = createServer();
          server.once("error", reject);
          server.listen(0, "127.0.0.1", () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const address = s.address();
    return typeof address === "object" && address ? address.port : 0;
  });
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function probe(url: string, pki: Pki): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      url,
      {
        ca: readFileSync(pki.caCert),
        cert: readFileSync(pki.adminCert),
        key: readFileSync(pki.adminKey),
        timeout: 2000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

async function waitUntilReady(url: string, pki: Pki, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // A server coming up offers nothing to watch; asking every 200 ms is the only way to learn it.
  while (Date.now() < deadline) {
    if (await probe(url, pki)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} not ready after ${timeoutMs / 1000} s\n${log()}`);
}

async function stopProcesses(processes: readonly { child: ChildProcess }[]): Promise<void> {
  // Reverse order: the clients of the apiserver first, etcd last.
  for (const { child } of [...processes].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
}

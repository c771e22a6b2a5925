// What the suites of sandbox service replicas on the Kubernetes runtime share: a real control
// plane with kwok nodes, the real agent standing in for each pod's container on the pod's
// (loopback) IP, and the product's processes (two sandbox replicas among them) on one PostgreSQL
// and NATS. Every process gets the same AIEM_DRIVE_DIR (cluster-env.ts), `<root>/drive`, as the
// split manifests' ReadWriteMany claim gives every replica one drive.
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import { kubernetesUnavailable, startTestCluster, type TestCluster, TEST_POLICY } from "@aiem/kit/testing";
import { type PodAgents, startPodAgents } from "@aiem/sandbox/testing/pod-agents";
import { createCluster, type Cluster, type Replica } from "./cluster.js";
import { createRestClient, type RestClient } from "./rest-client.js";

/** Why `suite` cannot run here (it needs the real stack and the Kubernetes binaries), said once. */
export function sandboxReplicasSkipReason(suite: string): string | undefined {
  const unavailable =
    !process.env.DATABASE_URL || !process.env.NATS_URL
      ? "DATABASE_URL and NATS_URL are not set"
      : kubernetesUnavailable();
  if (unavailable) console.warn(`${suite}: skipped, ${unavailable}`);
  return unavailable;
}

export interface SandboxReplicas {
  readonly k8s: TestCluster;
  readonly agents: PodAgents;
  readonly cluster: Cluster;
  /** An administrator's token. */
  readonly token: string;
  replica(name: string): Replica;
  /** A REST client of one replica (`sandbox-0`, `sandbox-1`) or of the edge. */
  via(name: string): RestClient;
  /** Runs `script` with sh in the sandbox to its end, which must be a success; its combined output. */
  sh(api: RestClient, sandbox: string, script: string): Promise<string>;
}

/** Starts the fixture before the suite's tests (call inside its describe) and stops it after them. */
export function useSandboxReplicas(namespace: string): SandboxReplicas {
  let started: Omit<SandboxReplicas, "replica" | "via" | "sh"> | undefined;
  const get = () => {
    if (!started) throw new Error("the sandbox replicas are not started yet");
    return started;
  };

  beforeAll(async () => {
    const k8s = await startTestCluster({ volumes: 0 });
    await k8s.createNamespace(namespace);
    const config = new KubeConfig();
    config.loadFromFile(k8s.kubeconfigPath);
    const agents = await startPodAgents({ config, core: config.makeApiClient(CoreV1Api) }, namespace);
    const cluster = await createCluster({
      databaseUrl: process.env.DATABASE_URL!,
      natsUrl: process.env.NATS_URL!,
      policy: TEST_POLICY,
      env: {
        AIEM_SANDBOX_RUNTIME: "kubernetes",
        KUBECONFIG: k8s.kubeconfigPath,
        AIEM_KUBERNETES_NAMESPACE: namespace,
        AIEM_SANDBOX_AGENT_IMAGE: "example.invalid/aiem-agent:1",
      },
    });
    started = { k8s, agents, cluster, token: await cluster.token("root", true) };
  }, 300_000);

  // A failed test shows what the sandbox replicas said besides their requests.
  afterEach((ctx) => {
    if (ctx.task.result?.state !== "fail" || !started) return;
    for (const r of started.cluster.replicas.filter((r) => r.part === "sandbox")) {
      const said = r.log.filter((l) => !l.includes('"msg":"request"')).slice(-40);
      console.error(`--- ${r.name}\n${said.join("\n")}`);
    }
  });

  afterAll(async () => {
    await started?.cluster.close();
    await started?.agents.stop();
    await started?.k8s.stop();
  }, 120_000);

  const replica = (name: string): Replica => get().cluster.replicas.find((r) => r.name === name)!;
  return {
    get k8s() {
      return get().k8s;
    },
    get agents() {
      return get().agents;
    },
    get cluster() {
      return get().cluster;
    },
    get token() {
      return get().token;
    },
    replica,
    via: (name) => createRestClient(name === "edge" ? get().cluster.edge.url : replica(name).url, get().token),
    async sh(api, sandbox, script) {
      const started = await api.ok("POST", `/v1/${sandbox}/processes?autoRun=true`, {
        command: "sh",
        args: ["-c", script],
      });
      const done = await api.ok("POST", `/v1/${started.process.name}:wait`, {});
      const out = await api.ok("GET", `/v1/${started.process.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
      const text = Buffer.from(out.data as string, "base64").toString();
      expect(done.process.exitCode, text).toBe(0);
      return text;
    },
  };
}

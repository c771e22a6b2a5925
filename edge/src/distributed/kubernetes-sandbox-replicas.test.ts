// Two sandbox service replicas on the Kubernetes runtime, against one PostgreSQL, NATS and a real
// control plane with kwok nodes, with the real agent standing in for each pod's container on the
// pod's (loopback) IP: either replica reaches a sandbox's agent through the cluster, none is
// pinned, and with one SIGKILLed the other carries on with the same agent, its processes and
// files. Needs the real stack and the Kubernetes binaries; skipped, saying why, without them.
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { kubernetesUnavailable, startTestCluster, type TestCluster, TEST_POLICY } from "@aiem/kit/testing";
import { type PodAgents, startPodAgents } from "@aiem/sandbox/testing/pod-agents";
import { createCluster, type Cluster, type Replica } from "./cluster.js";
import { createRestClient, type RestClient, SANDBOX_IMAGE, SANDBOX_TEMPLATE } from "./rest-client.js";

const databaseUrl = process.env.DATABASE_URL;
const natsUrl = process.env.NATS_URL;
const unavailable = !databaseUrl || !natsUrl ? "DATABASE_URL and NATS_URL are not set" : kubernetesUnavailable();
if (unavailable) console.warn(`kubernetes-sandbox-replicas.test.ts: skipped, ${unavailable}`);

const namespace = "sandboxes";

describe.skipIf(unavailable !== undefined)("sandbox replicas on the Kubernetes runtime", () => {
  let k8s: TestCluster;
  let agents: PodAgents;
  let cluster: Cluster;
  let token: string;

  beforeAll(async () => {
    k8s = await startTestCluster({ volumes: 0 });
    await k8s.createNamespace(namespace);
    const config = new KubeConfig();
    config.loadFromFile(k8s.kubeconfigPath);
    agents = await startPodAgents({ config, core: config.makeApiClient(CoreV1Api) }, namespace);
    cluster = await createCluster({
      databaseUrl: databaseUrl!,
      natsUrl: natsUrl!,
      policy: TEST_POLICY,
      env: {
        AIEM_SANDBOX_RUNTIME: "kubernetes",
        KUBECONFIG: k8s.kubeconfigPath,
        AIEM_KUBERNETES_NAMESPACE: namespace,
        AIEM_SANDBOX_AGENT_IMAGE: "example.invalid/aiem-agent:1",
      },
    });
    token = await cluster.token("root", true);
  }, 300_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state !== "fail") return;
    for (const r of cluster.replicas.filter((r) => r.part === "sandbox"))
      console.error(`--- ${r.name}\n${r.log.slice(-30).join("\n")}`);
  });

  afterAll(async () => {
    await cluster?.close();
    await agents?.stop();
    await k8s?.stop();
  }, 120_000);

  const replica = (name: string): Replica => cluster.replicas.find((r) => r.name === name)!;
  const via = (name: string): RestClient => createRestClient(replica(name).url, token);

  async function echoIn(api: RestClient, sandbox: string, text: string): Promise<string> {
    const started = await api.ok("POST", `/v1/${sandbox}/processes?autoRun=true`, {
      command: "sh",
      args: ["-c", `printf %s '${text}'`],
    });
    await api.ok("POST", `/v1/${started.process.name}:wait`, {});
    const out = await api.ok("GET", `/v1/${started.process.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    return Buffer.from(out.data as string, "base64").toString();
  }

  it("serves a sandbox from the other replica at once: its first call adopts the pod, with the first's processes", async () => {
    const first = via("sandbox-0");
    const created = await first.ok("POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=adopt", {
      sandboxEngineImage: SANDBOX_IMAGE,
      sandboxEngineTemplate: SANDBOX_TEMPLATE,
    });
    const name = created.sandboxEngine.name as string;
    await first.waitFor(name, "state", ["STATE_RUNNING"], 90_000);
    const long = await first.ok("POST", `/v1/${name}/processes?autoRun=true`, {
      command: "sh",
      args: ["-c", "while [ ! -e go ]; do sleep 0.1; done; echo got-$(cat go)"],
    });

    // No waiting for the second replica's reconcile: its first call takes the sandbox over.
    const second = via("sandbox-1");
    expect(await echoIn(second, name, "at-once")).toBe("at-once");
    await second.ok("POST", `/v1/${name}/filesystem:writeFile`, {
      path: "/workspace/go",
      content: Buffer.from("y").toString("base64"),
    });
    const read = await second.ok("GET", `/v1/${name}/filesystem:readFile?path=/workspace/go`);
    expect(Buffer.from(read.content as string, "base64").toString()).toBe("y");
    // The process the first replica started is followed by the second: its end and output.
    const ended = await second.ok("POST", `/v1/${long.process.name}:wait`, {});
    expect(ended.process.state).toBe("STATE_SUCCEEDED");
    const out = await second.ok("GET", `/v1/${long.process.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    expect(Buffer.from(out.data as string, "base64").toString()).toBe("got-y\n");

    await second.ok("DELETE", `/v1/${name}`);
    await expect.poll(async () => (await second.call("GET", `/v1/${name}`)).status, { timeout: 60_000 }).toBe(404);
  }, 300_000);

  it("reaches a sandbox's agent from either replica, and from the one left when the other is SIGKILLed", async () => {
    const edge = createRestClient(cluster.edge.url, token);
    const created = await edge.ok("POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=pods", {
      sandboxEngineImage: SANDBOX_IMAGE,
      sandboxEngineTemplate: SANDBOX_TEMPLATE,
    });
    const name = created.sandboxEngine.name as string;
    const { uid } = await edge.waitFor(name, "state", ["STATE_RUNNING"], 90_000);
    const agent = await agents.ready(uid);

    // The replica that did not start it holds no handle until its reconcile adopts the pod (it
    // follows the state change): until then it answers UNAVAILABLE, "retry shortly".
    for (const r of ["sandbox-0", "sandbox-1"])
      await expect
        .poll(async () => (await via(r).call("GET", `/v1/${name}/filesystem:statFile?path=/workspace`)).status, {
          timeout: 30_000,
        })
        .toBe(200);
    for (const r of ["sandbox-0", "sandbox-1"]) expect(await echoIn(via(r), name, `via-${r}`)).toBe(`via-${r}`);
    // A file written through one replica is read through the other: one agent, in the pod.
    const content = Buffer.from("one pod, two replicas");
    await via("sandbox-0").ok("POST", `/v1/${name}/filesystem:writeFile`, {
      path: "/workspace/shared.txt",
      content: content.toString("base64"),
    });
    const read = await via("sandbox-1").ok("GET", `/v1/${name}/filesystem:readFile?path=/workspace/shared.txt`);
    expect(Buffer.from(read.content as string, "base64")).toEqual(content);
    // A process started through one replica is waited for and read through the other.
    const long = await via("sandbox-0").ok("POST", `/v1/${name}/processes?autoRun=true`, {
      command: "sh",
      // Waits for a file the test writes later (its working directory is /workspace).
      args: ["-c", "while [ ! -e go ]; do sleep 0.1; done; echo got-$(cat go)"],
    });

    await cluster.stop(replica("sandbox-0"), "SIGKILL");

    const left = via("sandbox-1");
    expect((await left.ok("GET", `/v1/${name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
    await left.ok("POST", `/v1/${name}/filesystem:writeFile`, {
      path: "/workspace/go",
      content: Buffer.from("x").toString("base64"),
    });
    await left.ok("POST", `/v1/${long.process.name}:wait`, {});
    const out = await left.ok("GET", `/v1/${long.process.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    expect(Buffer.from(out.data as string, "base64").toString()).toBe("got-x\n");
    expect(await echoIn(left, name, "after")).toBe("after");
    // The same agent all along: the pod was left alone.
    expect(await agents.ready(uid)).toBe(agent);

    await left.ok("DELETE", `/v1/${name}`);
    await expect.poll(async () => (await left.call("GET", `/v1/${name}`)).status, { timeout: 60_000 }).toBe(404);
  }, 300_000);
});

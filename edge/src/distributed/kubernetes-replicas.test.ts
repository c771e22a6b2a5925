// Two engine service replicas on the Kubernetes runtime, against one PostgreSQL, NATS and a real
// control plane with kwok nodes: engines are objects in the cluster that any replica can act on,
// so when one replica is SIGKILLed the other carries every engine on (pause, resume, delete,
// new engines), and the pods of the running ones are left alone. Needs the real stack and the
// Kubernetes binaries (`npm run setup -- --kubernetes`); skipped, saying why, without them.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { kubernetesUnavailable, startTestCluster, type TestCluster, TEST_POLICY } from "@aiem/kit/testing";
import { createCluster, type Cluster, type Replica } from "./cluster.js";
import { createRestClient, DAI_PROFILE, DAI_VERSION, type RestClient } from "./rest-client.js";

const databaseUrl = process.env.DATABASE_URL;
const natsUrl = process.env.NATS_URL;
const unavailable = !databaseUrl || !natsUrl ? "DATABASE_URL and NATS_URL are not set" : kubernetesUnavailable();
if (unavailable) console.warn(`kubernetes-replicas.test.ts: skipped, ${unavailable}`);

const namespace = "engines";

interface PodSummary {
  readonly name: string;
  readonly uid: string;
  readonly phase: string;
}

describe.skipIf(unavailable !== undefined)("engine replicas on the Kubernetes runtime", () => {
  let k8s: TestCluster;
  let cluster: Cluster;
  let api: RestClient;

  beforeAll(async () => {
    k8s = await startTestCluster({ volumes: 12 });
    await k8s.createNamespace(namespace);
    cluster = await createCluster({
      databaseUrl: databaseUrl!,
      natsUrl: natsUrl!,
      policy: TEST_POLICY,
      // Engines on the cluster; sandboxes stay local (pods would need an agent image).
      env: { AIEM_ENGINE_RUNTIME: "kubernetes", KUBECONFIG: k8s.kubeconfigPath, AIEM_KUBERNETES_NAMESPACE: namespace },
    });
    api = createRestClient(cluster.edge.url, await cluster.token("root", true));
  }, 300_000);

  afterEach((ctx) => {
    if (ctx.task.result?.state !== "fail") return;
    for (const r of cluster.replicas.filter((r) => r.part === "engine"))
      console.error(`--- ${r.name}\n${r.log.slice(-30).join("\n")}`);
  });

  afterAll(async () => {
    await cluster?.close();
    await k8s?.stop();
  }, 120_000);

  const replica = (name: string): Replica => cluster.replicas.find((r) => r.name === name)!;

  /** The engine's pods as the cluster has them. */
  function podsOf(uid: string): PodSummary[] {
    const list = JSON.parse(
      k8s.kubectl(["get", "pods", "-n", namespace, "-l", `app.kubernetes.io/instance=${uid}`, "-o", "json"]),
    ) as { items: { metadata: { name: string; uid: string }; status: { phase: string } }[] };
    return list.items.map((p) => ({ name: p.metadata.name, uid: p.metadata.uid, phase: p.status.phase }));
  }

  function claimExists(uid: string): boolean {
    return (
      k8s.kubectl(["get", "pvc", "-n", namespace, "--ignore-not-found", "-o", "name", `engine-${uid}`]).trim() !== ""
    );
  }

  async function createEngine(id: string): Promise<{ name: string; uid: string }> {
    const body = await api.ok("POST", `/v1/workspaces/team-a/daiEngines?daiEngineId=${id}`, {
      profile: DAI_PROFILE,
      daiEngineVersion: DAI_VERSION,
    });
    return { name: body.daiEngine.name, uid: body.daiEngine.uid };
  }

  it("carries every engine on when one replica is SIGKILLed", async () => {
    const engines = [];
    for (let i = 0; i < 4; i++) engines.push(await createEngine(`k${i}`));
    for (const e of engines) await api.waitFor(e.name, "state", ["STATE_RUNNING"], 90_000);
    const before = new Map(engines.map((e) => [e.uid, podsOf(e.uid)]));
    for (const [uid, pods] of before)
      expect(
        pods.map((p) => p.name),
        uid,
      ).toEqual([`engine-${uid}`]);

    await cluster.stop(replica("engine-0"), "SIGKILL");

    // Nothing was pinned to the dead replica: every engine still runs, on the same pod. (Read
    // with waitFor: a call the edge had already sent down the dead replica's connection fails
    // once, until its readiness check leaves the replica out.)
    for (const e of engines) {
      await api.waitFor(e.name, "state", ["STATE_RUNNING"], 30_000);
      expect(podsOf(e.uid)).toEqual(before.get(e.uid));
    }
    // And the replica left acts on all of them, old and new.
    const late = await createEngine("late");
    await api.waitFor(late.name, "state", ["STATE_RUNNING"], 90_000);
    expect(podsOf(late.uid)).toHaveLength(1);

    const [paused, resumed, deleted, kept] = [engines[0]!, engines[1]!, engines[2]!, engines[3]!];
    for (const e of [paused, resumed]) await api.ok("POST", `/v1/${e.name}:pause`, {});
    await api.ok("DELETE", `/v1/${deleted.name}`);
    for (const e of [paused, resumed]) await api.waitFor(e.name, "state", ["STATE_PAUSED"], 90_000);
    await expect.poll(async () => (await api.call("GET", `/v1/${deleted.name}`)).status, { timeout: 90_000 }).toBe(404);
    for (const e of [paused, resumed]) {
      expect(podsOf(e.uid)).toEqual([]);
      expect(claimExists(e.uid)).toBe(true);
    }
    expect(podsOf(deleted.uid)).toEqual([]);
    expect(claimExists(deleted.uid)).toBe(false);

    await api.ok("POST", `/v1/${resumed.name}:resume`, {});
    await api.waitFor(resumed.name, "state", ["STATE_RUNNING"], 90_000);
    expect(podsOf(resumed.uid)).toHaveLength(1);
    expect(podsOf(kept.uid)).toEqual(before.get(kept.uid));

    // Back, the replica takes its share again without touching what runs.
    await cluster.start(replica("engine-0"));
    for (const e of [kept, resumed, late]) {
      await api.waitFor(e.name, "state", ["STATE_RUNNING"], 90_000);
      expect(podsOf(e.uid)).toHaveLength(1);
    }
    expect(podsOf(kept.uid)).toEqual(before.get(kept.uid));
  }, 480_000);
});

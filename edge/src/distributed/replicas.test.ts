// Two replicas of each service against one PostgreSQL and NATS, behind one edge: the work is
// shared without doubles (one process per engine, each state change published once, no step
// taken twice), calls about an engine or sandbox reach the replica running it, and when a
// replica of each service is SIGKILLed the others carry on; back, it finds its work again.
import { access } from "node:fs/promises";
import { TEST_POLICY } from "@aiem/kit/testing";
import { connect } from "node:net";
import { join } from "node:path";
import { fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEventBus, type EventBus, type Replay } from "@aiem/kit/events";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { FilesystemService } from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { hostRequest } from "../testing/content-client.js";
import { PORT_PROGRAM } from "../testing/content-fixture.js";
import { createCluster, processesUnder, type Cluster, type Replica } from "./cluster.js";
import {
  createRestClient,
  DAI_PROFILE,
  DAI_VERSION,
  SANDBOX_IMAGE,
  SANDBOX_TEMPLATE,
  type RestClient,
} from "./rest-client.js";

const databaseUrl = process.env.DATABASE_URL;
const natsUrl = process.env.NATS_URL;

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

interface StateEvent {
  id: string;
  uid: string;
  previous: number;
  state: number;
  reconciling: boolean;
}

describe.skipIf(!databaseUrl || !natsUrl)("two replicas of each service", () => {
  let cluster: Cluster;
  let api: RestClient;
  let token: string;
  let bus: EventBus;
  let replay: Replay;
  const events: StateEvent[] = [];

  beforeAll(async () => {
    cluster = await createCluster({ databaseUrl: databaseUrl!, natsUrl: natsUrl!, policy: TEST_POLICY });
    token = await cluster.token("root", true);
    api = createRestClient(cluster.edge.url, token);
    bus = await createEventBus({ natsUrl, prefix: `c${cluster.suffix}` });
    replay = bus.replay({ subjects: "enginemanager.engines.>" }, async (msg) => {
      const event = fromBinary(EventSchema, msg.data);
      if (event.payload.case !== "engineStateChanged") return;
      const p = event.payload.value;
      events.push({ id: event.id, uid: p.uid, previous: p.previousState, state: p.state, reconciling: p.reconciling });
    });
    await replay.ready;
  }, 240_000);

  afterEach((ctx) => {
    // The replicas' last log lines when a test failed: what the processes saw.
    if (ctx.task.result?.state !== "fail") return;
    for (const r of [...cluster.replicas, cluster.edge]) console.error(`--- ${r.name}\n${r.log.slice(-30).join("\n")}`);
  });

  afterAll(async () => {
    await replay?.stop();
    await bus?.close();
    await cluster?.close();
  }, 120_000);

  const replica = (name: string): Replica => cluster.replicas.find((r) => r.name === name)!;

  async function createEngine(id: string): Promise<{ name: string; uid: string }> {
    const body = await api.ok("POST", `/v1/workspaces/team-a/daiEngines?daiEngineId=${id}`, {
      profile: DAI_PROFILE,
      daiEngineVersion: DAI_VERSION,
    });
    return { name: body.daiEngine.name, uid: body.daiEngine.uid };
  }

  async function createSandbox(id: string): Promise<string> {
    const body = await api.ok("POST", `/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=${id}`, {
      sandboxEngineImage: SANDBOX_IMAGE,
      sandboxEngineTemplate: SANDBOX_TEMPLATE,
    });
    return body.sandboxEngine.name;
  }

  /** Runs `echo` in the sandbox and reads its output back, through whichever replica the edge picks. */
  async function echoIn(sandbox: string, text: string): Promise<string> {
    const started = await api.ok("POST", `/v1/${sandbox}/processes?autoRun=true`, {
      command: "sh",
      args: ["-c", `printf %s '${text}'`],
    });
    await api.ok("POST", `/v1/${started.process.name}:wait`, {});
    const out = await api.ok("GET", `/v1/${started.process.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    return Buffer.from(out.data as string, "base64").toString();
  }

  /** Opens a WebSocket-style upgrade at `base` + `path`, sends `text` and resolves with what comes back. */
  async function wsEcho(base: string, path: string, text: string): Promise<string> {
    const token = await cluster.token("root", true);
    const url = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(
          [
            `GET ${path} HTTP/1.1`,
            `host: ${url.host}`,
            "connection: Upgrade",
            "upgrade: websocket",
            "sec-websocket-version: 13",
            "sec-websocket-key: c2FtcGxlIG5vbmNlIDEyMw==",
            `authorization: Bearer ${token}`,
            "",
            "",
          ].join("\r\n"),
        );
      });
      let seen = "";
      socket.on("data", (d: Buffer) => {
        seen += d.toString("latin1");
        const end = seen.indexOf("\r\n\r\n");
        if (end < 0) return;
        if (!seen.startsWith("HTTP/1.1 101")) return reject(new Error(seen.slice(0, 300)));
        const rest = seen.slice(end + 4);
        if (rest === "") return void socket.write(text);
        if (rest.length >= text.length) {
          socket.destroy();
          resolve(rest);
        }
      });
      socket.on("error", reject);
      setTimeout(() => {
        socket.destroy();
        reject(new Error(`no echo from ${base}${path}: ${seen.slice(0, 200)}`));
      }, 15_000).unref();
    });
  }

  /** Engine processes by engine uid, over every replica's directory. */
  async function engineProcesses(): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (const { cwd } of await processesUnder(cluster.root)) {
      const uid = /\/engines\/([^/]+)\/data$/.exec(cwd)?.[1];
      if (uid) counts.set(uid, (counts.get(uid) ?? 0) + 1);
    }
    return counts;
  }

  /** No step published twice: an engine's events never repeat the same change back to back. */
  function expectEachStepOnce(): void {
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const byUid = new Map<string, StateEvent[]>();
    for (const e of events) byUid.set(e.uid, [...(byUid.get(e.uid) ?? []), e]);
    for (const [uid, list] of byUid) {
      for (let i = 1; i < list.length; i++) {
        const [a, b] = [list[i - 1]!, list[i]!];
        expect(
          `${uid}: ${a.previous}->${a.state}/${a.reconciling} then ${b.previous}->${b.state}/${b.reconciling}`,
        ).not.toBe(
          `${uid}: ${a.previous}->${a.state}/${a.reconciling} then ${a.previous}->${a.state}/${a.reconciling}`,
        );
      }
    }
  }

  const engines: Array<{ name: string; uid: string }> = [];
  const sandboxes: string[] = [];

  it("runs each engine once, and answers for it from either replica", async () => {
    for (let i = 0; i < 4; i++) engines.push(await createEngine(`e${i}`));
    for (const e of engines) await api.waitFor(e.name, "state", ["STATE_RUNNING"], 90_000);
    const processes = await engineProcesses();
    for (const e of engines) expect(processes.get(e.uid), e.name).toBe(1);
    // Logs live on the host running the engine; the edge picks replicas in turn, so some of
    // these are carried out by the other replica.
    for (const e of engines)
      for (let k = 0; k < 2; k++) expect((await api.ok("POST", `/v1/${e.name}:downloadLogs`, {})).logs).toBeDefined();
    // A WebSocket to an engine at either engine replica reaches it (the edge's own upgrade path
    // to separate parts is other work): the stand-in echoes what it is sent.
    for (const e of engines) {
      for (const r of ["engine-0", "engine-1"])
        expect(await wsEcho(replica(r).url, `/engines/${e.uid}/ws`, `ping-${r}`), `${e.name} via ${r}`).toBe(
          `ping-${r}`,
        );
    }
    await expect
      .poll(() => events.filter((e) => e.state !== 0).length, { timeout: 20_000 })
      .toBeGreaterThanOrEqual(engines.length * 2);
    expectEachStepOnce();
  }, 240_000);

  it("runs each sandbox's calls on the replica running it", async () => {
    for (let i = 0; i < 4; i++) sandboxes.push(await createSandbox(`s${i}`));
    const uids = [];
    for (const s of sandboxes) uids.push((await api.waitFor(s, "state", ["STATE_RUNNING"], 90_000)).uid as string);
    // The edge takes turns, so both replicas run some: half of the calls below are forwarded.
    const hosts = await Promise.all(
      uids.map(async (uid) =>
        (
          await Promise.all(["sandbox-0", "sandbox-1"].map((r) => exists(join(cluster.root, r, "sandboxes", uid))))
        ).indexOf(true),
      ),
    );
    expect(new Set(hosts)).toEqual(new Set([0, 1]));
    for (const [i, s] of sandboxes.entries())
      for (let k = 0; k < 2; k++) expect(await echoIn(s, `out-${i}-${k}`)).toBe(`out-${i}-${k}`);
    // A client stream names its sandbox in its first message: the replica that takes the call
    // reads that far, and the owner gets the first message and the rest.
    const files = createClient(
      FilesystemService,
      createConnectTransport({
        baseUrl: cluster.edge.url,
        httpVersion: "2",
        interceptors: [
          (next) => (req) => {
            req.header.set("authorization", `Bearer ${token}`);
            return next(req);
          },
        ],
      }),
    );
    for (const [i, s] of sandboxes.entries()) {
      for (let k = 0; k < 2; k++) {
        const content = Buffer.alloc(3 << 20, `stream-${i}-${k}`);
        const path = `/workspace/stream-${k}.bin`;
        async function* messages() {
          yield { header: { name: s, path } };
          for (let at = 0; at < content.length; at += 1 << 20) yield { data: content.subarray(at, at + (1 << 20)) };
          yield { last: true };
        }
        expect((await files.writeFileStream(messages())).fileInfo?.size, `${s} via ${k}`).toBe(BigInt(content.length));
        const parts: Uint8Array[] = [];
        for await (const m of files.readFileStream({ name: s, path })) parts.push(m.data);
        expect(Buffer.concat(parts).equals(content), `${s} read via ${k}`).toBe(true);
      }
    }

    // One workspace drive whichever replica runs the sandbox: a file put there from a sandbox on
    // one replica is taken into a sandbox on the other.
    const from = sandboxes[hosts.indexOf(0)]!;
    const to = sandboxes[hosts.indexOf(1)]!;
    await api
      .ok("POST", `/v1/${from}/processes?autoRun=true`, {
        command: "sh",
        args: ["-c", "printf shared > /workspace/drive-note"],
      })
      .then((b) => api.ok("POST", `/v1/${b.process.name}:wait`, {}));
    await api.ok("POST", `/v1/${from}/h2oDrive:uploadFile`, {
      localPath: "/workspace/drive-note",
      remotePath: "notes/from-replica-0.txt",
    });
    await api.ok("POST", `/v1/${to}/h2oDrive:downloadFile`, {
      remotePath: "notes/from-replica-0.txt",
      localPath: "/workspace/drive-note",
    });
    const read = await api.ok("GET", `/v1/${to}/filesystem:readFile?path=/workspace/drive-note`);
    expect(Buffer.from(read.content as string, "base64").toString()).toBe("shared");
  }, 240_000);

  it("keeps a port's session at its origin whichever sandbox replica takes the request", async () => {
    const edgePort = new URL(cluster.edge.url).port;
    for (const s of sandboxes.slice(0, 2)) {
      const started = await api.ok("POST", `/v1/${s}/processes?autoRun=true`, {
        command: "node",
        args: ["-e", PORT_PROGRAM, `page of ${s}`],
      });
      expect(started.process.name).toBeTruthy();
      await api.ok("POST", `/v1/${s}/ports?portId=8080`, {});
      const port = await api.waitFor(`${s}/ports/8080`, "state", ["STATE_READY"], 60_000);
      const host = new URL(port.internalUrl).host;
      expect(host).toMatch(new RegExp(`\\.sandboxes\\.localhost:${edgePort}$`));
      // The session is made by the replica running the sandbox, for the browser's Host, which the
      // other replica keeps when it forwards; the edge takes turns between the two.
      const exchanged = await hostRequest(cluster.edge.url, host, `/?token=${token}`);
      expect(exchanged.status, exchanged.text).toBe(303);
      const cookie = String(exchanged.headers["set-cookie"]).split(";")[0]!;
      expect(cookie).toMatch(/^__Host-aiem_session=/);
      // A port is READY once routed, before its program listens: 502 until the program serves.
      await expect
        .poll(async () => (await hostRequest(cluster.edge.url, host, "/", { cookie })).status, { timeout: 30_000 })
        .not.toBe(502);
      for (let k = 0; k < 4; k++) {
        const page = await hostRequest(cluster.edge.url, host, "/", { cookie });
        expect(page.status, `${s} #${k}: ${page.text}`).toBe(200);
        expect(page.text).toBe(`page of ${s}`);
      }
    }
  }, 180_000);

  it("carries on when a replica of each service is SIGKILLed, and the replica finds its work when back", async () => {
    const killed = ["catalogue-0", "engine-0", "sandbox-0"].map(replica);
    await Promise.all(killed.map((r) => cluster.stop(r, "SIGKILL")));

    // New work goes to the replicas left, at once: no call fails for the dead ones.
    const more = [await createEngine("after-0"), await createEngine("after-1")];
    const moreSandboxes = [await createSandbox("after-s0"), await createSandbox("after-s1")];
    await api.ok("POST", "/v1/workspaces/team-a/daiEngineVersions?daiEngineVersionId=9.9.9", {
      image: "example/dai:9.9.9",
    });
    for (const e of more) await api.waitFor(e.name, "state", ["STATE_RUNNING"], 90_000);
    for (const s of moreSandboxes) {
      await api.waitFor(s, "state", ["STATE_RUNNING"], 90_000);
      expect(await echoIn(s, "still")).toBe("still");
    }
    engines.push(...more);
    sandboxes.push(...moreSandboxes);

    await Promise.all(killed.map((r) => cluster.start(r)));
    // Every engine runs, once; the replica back adopted the processes that outlived it.
    for (const e of engines) await api.waitFor(e.name, "state", ["STATE_RUNNING"], 90_000);
    const processes = await engineProcesses();
    for (const e of engines) expect(processes.get(e.uid), e.name).toBe(1);
    for (const e of engines) expect((await api.ok("POST", `/v1/${e.name}:downloadLogs`, {})).logs).toBeDefined();
    // Sandboxes of the replica back run again (their agents died with it) and take new work.
    for (const [i, s] of sandboxes.entries()) {
      await api.waitFor(s, "state", ["STATE_RUNNING"], 90_000);
      expect(await echoIn(s, `back-${i}`)).toBe(`back-${i}`);
    }
    // Paused and deleted through either replica, each exactly once.
    for (const e of engines.slice(0, 3)) await api.ok("POST", `/v1/${e.name}:pause`, {});
    for (const e of engines.slice(0, 3)) await api.waitFor(e.name, "state", ["STATE_PAUSED"], 60_000);
    for (const e of engines.slice(3)) await api.ok("DELETE", `/v1/${e.name}`);
    for (const e of engines.slice(3)) {
      await expect.poll(async () => (await api.call("GET", `/v1/${e.name}`)).status, { timeout: 60_000 }).toBe(404);
    }
    const after = await engineProcesses();
    for (const e of engines) expect(after.get(e.uid) ?? 0, e.name).toBe(0);
    expectEachStepOnce();
  }, 480_000);
});

// The parts as separate processes (`npm run start:service -- <part>`), sharing only PostgreSQL,
// NATS and their APIs, pass the same smoke test as the all-in-one server. Needs DATABASE_URL
// and NATS_URL, as separate processes cannot share the embedded database or bus.
import { randomBytes } from "node:crypto";
import type { RestJson } from "@aiem/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Action, createPolicy, Kind } from "@aiem/kit/authz";
import { ConnectError } from "@aiem/kit/errors";
import { principalName } from "@aiem/kit/identity";
import { createCluster, type Cluster } from "../distributed/cluster.js";
import { echo, hostRequest, upgradeRequest } from "../testing/content-client.js";
import { IMAGE, PORT_PROGRAM, TEMPLATE } from "../testing/content-fixture.js";
import { smokeTest } from "../testing/smoke.js";
import { landedParts } from "./modules.js";

const POLICY = `
admins: [users/root]
workspaces:
  team-a:
    members: [users/alice]
  team-b:
    members: [users/bob]
`;

const real = Boolean(process.env.DATABASE_URL && process.env.NATS_URL);
describe.skipIf(!real)("separate processes against PostgreSQL and NATS", () => {
  let cluster: Cluster;
  let edgeUrl: string;

  beforeAll(async () => {
    // One replica of each part (two are the replicas test's); notebooks run the stand-in, not a
    // Jupyter that may be installed.
    cluster = await createCluster({
      replicas: 1,
      databaseUrl: process.env.DATABASE_URL!,
      natsUrl: process.env.NATS_URL!,
      policy: POLICY,
      env: { AIEM_JUPYTER_COMMAND: "none" },
    });
    edgeUrl = cluster.edge.url;
  }, 120_000);

  afterAll(() => cluster?.close());

  it("passes the smoke test through the edge", async () => {
    const token = await cluster.token("root", true);
    await smokeTest(edgeUrl, token, landedParts);
  });

  it("gives a sandbox process its secret environment variable, with the in-process access rule", async () => {
    const tokens = {
      root: await cluster.token("root", true),
      alice: await cluster.token("alice"),
      bob: await cluster.token("bob"),
    };
    const rest = async (who: keyof typeof tokens, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${edgeUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${tokens[who]}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as RestJson };
    };
    const ok = (r: { status: number; body: RestJson }) => {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const value = `s3cr3t-${randomBytes(8).toString("hex")}`;
    const secret = ok(await rest("alice", "POST", "/v1/workspaces/team-a/secrets?secretId=api-key", {})).secret
      .name as string;
    ok(await rest("alice", "POST", `/v1/${secret}/versions`, { value: Buffer.from(value).toString("base64") }));

    const sandbox = async (who: "alice" | "bob", workspace: string) => {
      const created = ok(
        await rest(who, "POST", `/v1/workspaces/${workspace}/sandboxEngines?sandboxEngineId=s-${who}`, {
          sandboxEngineImage: "workspaces/global/sandboxEngineImages/default",
          sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/default",
        }),
      ).sandboxEngine.name as string;
      for (const until = Date.now() + 60_000; ; ) {
        const state = ok(await rest(who, "GET", `/v1/${created}`)).sandboxEngine.state as string;
        if (state === "STATE_RUNNING") return created;
        if (Date.now() > until) throw new Error(`${created} stayed ${state}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const processWith = (who: "alice" | "bob", sb: string, secretVersion: string) =>
      rest(who, "POST", `/v1/${sb}/processes?autoRun=true`, {
        command: "sh",
        args: ["-c", 'printf %s "$API_KEY"'],
        secretEnvironmentVariables: { API_KEY: { secretVersion } },
      });

    const alices = await sandbox("alice", "team-a");
    const started = ok(await processWith("alice", alices, `${secret}/versions/latest`)).process.name as string;
    ok(await rest("alice", "POST", `/v1/${started}:wait`, {}));
    const out = ok(await rest("alice", "GET", `/v1/${started}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`));
    expect(Buffer.from(out.data as string, "base64").toString()).toBe(value);

    // bob is no member of team-a: the answer the policy gives in one process, and no process.
    const bobs = await sandbox("bob", "team-b");
    const policy = await createPolicy(cluster.policyFile);
    const bob = { name: principalName("bob"), subject: "bob", displayName: "bob", roles: [], admin: false };
    let expected: ConnectError | undefined;
    try {
      policy.check(bob, Action.ACCESS, Kind.secretVersions, "workspaces/team-a");
    } catch (err) {
      expected = ConnectError.from(err);
    }
    const denied = await processWith("bob", bobs, `${secret}/versions/latest`);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: expected!.code, message: expected!.rawMessage });
    expect(ok(await rest("bob", "GET", `/v1/${bobs}/processes`)).processes ?? []).toEqual([]);
    // A version that does not exist is NOT_FOUND, named.
    const missing = await processWith("alice", alices, "workspaces/team-a/secrets/none/versions/latest");
    expect(missing.status).toBe(404);
    expect(missing.body.message).toContain("workspaces/team-a/secrets/none/versions/latest");
  }, 120_000);

  it("serves an engine and a sandbox port at their own origins through the edge, WebSockets included", async () => {
    const alice = await cluster.token("alice");
    const bearer = { authorization: `Bearer ${alice}` };
    const rest = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${edgeUrl}${path}`, {
        method,
        headers: { ...bearer, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = (await res.json()) as RestJson;
      expect(res.status, JSON.stringify(json)).toBe(200);
      return json;
    };
    const until = async (path: string, field: string, state: string) => {
      for (const deadline = Date.now() + 90_000; ; ) {
        const got = (await rest("GET", path))[field];
        if (got.state === state) return got;
        if (Date.now() > deadline) throw new Error(`${path} stayed ${got.state}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const dai = {
      profile: "workspaces/global/daiEngineProfiles/default",
      daiEngineVersion: "workspaces/global/daiEngineVersions/1.11.0",
    };
    const made = (await rest("POST", "/v1/workspaces/team-a/daiEngines?daiEngineId=origins", dai)).daiEngine
      .name as string;
    const sb = (
      await rest("POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=origins", {
        sandboxEngineImage: IMAGE,
        sandboxEngineTemplate: TEMPLATE,
      })
    ).sandboxEngine.name as string;
    const engine = await until(`/v1/${made}`, "daiEngine", "STATE_RUNNING");
    const sandbox = await until(`/v1/${sb}`, "sandboxEngine", "STATE_RUNNING");
    await rest("POST", `/v1/${sb}/processes?autoRun=true`, { command: "node", args: ["-e", PORT_PROGRAM, "page"] });
    await rest("POST", `/v1/${sb}/ports?portId=8080`, {});
    await until(`/v1/${sb}/ports/8080`, "port", "STATE_READY");

    const notebook = (
      await rest("POST", "/v1/workspaces/team-a/notebookEngines?notebookEngineId=origins", {
        profile: "workspaces/global/notebookEngineProfiles/default",
        notebookImage: "workspaces/global/notebookEngineImages/default",
      })
    ).notebookEngine.name as string;
    const port = (await rest("GET", `/v1/${sb}/ports/8080`)).port;
    const edgePort = new URL(edgeUrl).port;
    expect(engine.loginUrl).toBe(`http://${engine.uid}.engines.localhost:${edgePort}/${engine.name}/oidc/login`);
    expect(port.internalUrl).toBe(`http://8080-${sandbox.uid}.sandboxes.localhost:${edgePort}/`);
    const engineHost = new URL(engine.loginUrl).host;
    const portHost = new URL(port.internalUrl).host;
    expect((await hostRequest(edgeUrl, engineHost, `/engines/${engine.uid}/`, bearer)).status).toBe(200);
    expect((await hostRequest(edgeUrl, engineHost, new URL(engine.loginUrl).pathname, bearer)).status).toBe(200);
    // READY once routed, before the program listens: 502 until it serves.
    await expect.poll(async () => (await hostRequest(edgeUrl, portHost, "/", bearer)).status).not.toBe(502);
    expect((await hostRequest(edgeUrl, portHost, "/", bearer)).text).toBe("page");
    expect((await hostRequest(edgeUrl, portHost, "/go", bearer)).headers.location).toBe("/landed");
    // The ticket the engine part seals, the edge opens (AIEM_INTERNAL_KEY).
    await until(`/v1/${notebook}`, "notebookEngine", "STATE_RUNNING");
    const access = new URL((await rest("GET", `/v1/${notebook}:access`)).uri as string);
    const exchanged = await hostRequest(edgeUrl, access.host, `${access.pathname}${access.search}`);
    expect(exchanged.status, exchanged.text).toBe(303);
    const cookie = String(exchanged.headers["set-cookie"]).split(";")[0]!;
    expect((await hostRequest(edgeUrl, access.host, access.pathname, { cookie })).status).toBe(200);
    for (const [host, path] of [
      [engineHost, `/engines/${engine.uid}/ws`],
      [portHost, "/ws"],
    ] as const) {
      const upgraded = await upgradeRequest(edgeUrl, host, path, bearer);
      expect(upgraded.status, host).toBe(101);
      expect(await echo(upgraded.socket, `through ${host}`)).toBe(`through ${host}`);
      upgraded.socket.destroy();
      const refused = await upgradeRequest(edgeUrl, host, path);
      expect(refused.status, host).toBe(401);
      refused.socket.destroy();
    }
  }, 180_000);

  it("stops each process gracefully on SIGTERM", async () => {
    const edge = cluster.edge.child!;
    const code = await new Promise<number | null>((resolve) => {
      edge.once("exit", (c) => resolve(c));
      edge.kill("SIGTERM");
    });
    expect(code).toBe(0);
  });
});

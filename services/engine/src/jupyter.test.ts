// A notebook engine that runs the real Jupyter Notebook (Debian's `jupyter-notebook`), reached
// through the edge: `:access` gives its URL, a one-time ?token= opens it in a "browser", its API
// answers, a kernel's WebSocket works through the route's upgrade handler, and pause and resume
// keep the notebook directory. Skipped, saying why, where Jupyter is not installed.
import { createServer, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineHttpRoute } from "./proxy.js";
import { findOnPath } from "./runtime/local-runtime.js";
import { catalogueFixture, startEngineTestHost, type EngineTestHost } from "./testing/index.js";

const jupyter = await findOnPath("jupyter-notebook");
if (!jupyter)
  console.warn("jupyter.test.ts: skipped, jupyter-notebook is not on the PATH (Debian package jupyter-notebook)");

describe.skipIf(!jupyter)("a notebook engine on Jupyter", () => {
  let h: EngineTestHost;
  beforeAll(async () => {
    h = await startEngineTestHost({ settings: { jupyterCommand: jupyter!, startTimeoutMs: 90_000 } });
    await catalogueFixture(h, "notebookEngineProfiles", "nb", { enabled: true });
    await catalogueFixture(h, "notebookEngineImages", "jupyter", {
      image: "quay.io/jupyter/minimal-notebook:latest",
      enabled: true,
    });
  });
  afterAll(async () => h?.stop());

  it("serves Jupyter through the edge, WebSockets included, and keeps its files over pause and resume", {
    timeout: 120_000,
  }, async () => {
    const name = await h.create("notebookEngines", "jup", {
      profile: "workspaces/global/notebookEngineProfiles/nb",
      notebookImage: "workspaces/global/notebookEngineImages/jupyter",
    });
    const e = await h.waitForState(name, "STATE_RUNNING", 90_000);
    const access = await h.rest("GET", `/v1/${name}:access`, { who: "alice" });
    const uri: string = access.body.uri;
    expect(uri).toBe(`${h.url}/engines/${e.uid}/`);

    // A browser follows the link with ?token= once; from then on the cookie carries it.
    const token = await h.token("alice");
    const first = await fetch(`${uri}?token=${token}`, { redirect: "manual" });
    expect(first.status).toBe(303);
    const cookie = first.headers.get("set-cookie")!.split(";")[0]!;
    const tree = await fetch(`${h.url}${first.headers.get("location")}`, { headers: { cookie }, redirect: "manual" });
    expect(tree.status).toBe(302);
    expect(tree.headers.get("location")).toContain(`/engines/${e.uid}/tree`);
    const page = await fetch(`${uri}tree`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Jupyter");
    const api = (await (await fetch(`${uri}api`, { headers: { cookie } })).json()) as { version: string };
    expect(api.version).toMatch(/^\d+\.\d+/);

    // Save a file through Jupyter's contents API (its XSRF check wants the _xsrf cookie echoed).
    const xsrf =
      (await fetch(`${uri}tree`, { headers: { cookie } })).headers.get("set-cookie")?.match(/_xsrf=([^;]+)/)?.[1] ?? "";
    const put = await fetch(`${uri}api/contents/kept.txt`, {
      method: "PUT",
      headers: { cookie: `${cookie}; _xsrf=${xsrf}`, "x-xsrftoken": xsrf, "content-type": "application/json" },
      body: JSON.stringify({ type: "file", format: "text", content: "kept over pause" }),
    });
    expect([200, 201]).toContain(put.status);

    // A kernel and its WebSocket, through the route's upgrade handler.
    const kernel = await fetch(`${uri}api/kernels`, {
      method: "POST",
      headers: { cookie: `${cookie}; _xsrf=${xsrf}`, "x-xsrftoken": xsrf, "content-type": "application/json" },
      body: "{}",
    });
    expect(kernel.status).toBe(201);
    const { id } = (await kernel.json()) as { id: string };
    const route = h.engine.httpRoutes[0] as EngineHttpRoute;
    const server = createServer((req, res) => route.handler(req, res));
    server.on("upgrade", (req: IncomingMessage, socket, head) => route.upgrade(req, socket, head));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const port = (server.address() as { port: number }).port;
      const status = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => {
          socket.write(
            [
              `GET /engines/${e.uid}/api/kernels/${id}/channels HTTP/1.1`,
              `host: 127.0.0.1:${port}`,
              "connection: Upgrade",
              "upgrade: websocket",
              "sec-websocket-version: 13",
              "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==",
              `authorization: Bearer ${token}`,
              "",
              "",
            ].join("\r\n"),
          );
        });
        socket.once("data", (d: Buffer) => {
          resolve(d.toString("latin1").split("\r\n")[0]!);
          socket.destroy();
        });
        socket.on("error", reject);
      });
      expect(status).toBe("HTTP/1.1 101 Switching Protocols");
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }

    expect((await h.rest("POST", `/v1/${name}:pause`, { who: "alice", body: {} })).status).toBe(200);
    await h.waitForState(name, "STATE_PAUSED", 30_000);
    expect((await h.rest("POST", `/v1/${name}:resume`, { who: "alice", body: {} })).status).toBe(200);
    await h.waitForState(name, "STATE_RUNNING", 90_000);
    const kept = (await (await fetch(`${uri}api/contents/kept.txt`, { headers: { cookie } })).json()) as {
      content: string;
    };
    expect(kept.content).toBe("kept over pause");
  });
});

// The all-in-one server with every part, user content at its own origins (AIEM_PATH_URLS off),
// and what the content-origin tests need in it: two running DAI engines (stand-ins, whose
// servers echo WebSockets) and a sandbox whose program serves a page, a redirect and a
// WebSocket echo on port 8080, made reachable.
import { createModuleFactories } from "../host/modules.js";
import type { RestJson } from "@aiem/kit/testing";
import type { NodeHandler } from "../transcoder/transcoder.js";
import { hostRequest } from "./content-client.js";
import { freePort } from "./free-port.js";
import { startTestHost, type TestHost } from "./test-host.js";

export const IMAGE = "workspaces/global/sandboxEngineImages/default";
export const TEMPLATE = "workspaces/global/sandboxEngineTemplates/default";

/** What the sandbox's program runs: `/` a page (its body given), `/go` a redirect, upgrades echoed. */
export const PORT_PROGRAM = `
const http = require("http");
const page = process.argv[1];
const server = http.createServer((q, s) => {
  if (q.url.startsWith("/go")) { s.writeHead(302, { location: "/landed" }); return s.end(); }
  if (q.url.startsWith("/echo")) { s.setHeader("content-type", "application/json"); return s.end(JSON.stringify({ url: q.url, headers: q.headers })); }
  s.setHeader("content-type", "text/html");
  s.setHeader("set-cookie", "from_port=1; Path=/");
  s.end(page);
});
server.on("upgrade", (q, socket) => {
  socket.write("HTTP/1.1 101 Switching Protocols\\r\\nupgrade: websocket\\r\\nconnection: Upgrade\\r\\n\\r\\n");
  socket.on("data", (d) => socket.write(d));
});
server.listen(8080, "127.0.0.1");`;

export interface ContentFixture {
  readonly t: TestHost;
  readonly token: string;
  /** Two running DAI engines as the server returns them (loginUrl, apiUrl, uid). */
  readonly engines: readonly [RestJson, RestJson];
  /** A running notebook engine (the stand-in server). */
  readonly notebook: RestJson;
  /** A running H2O engine (the stand-in server), `workspaces/content/h2oEngines/h`. */
  readonly h2o: RestJson;
  readonly sandbox: RestJson;
  /** The port as the server returns it (internalUrl). */
  readonly port: RestJson;
  rest(method: string, path: string, body?: unknown, token?: string): Promise<{ status: number; body: RestJson }>;
  stop(): Promise<void>;
}

/** A port nothing listens on now, for a server whose URL must be known before it starts. */
export async function startContentFixture(options: {
  page: string;
  fallback?: NodeHandler;
  env?: Record<string, string>;
}): Promise<ContentFixture> {
  // The parts build URLs from AIEM_PORT, as `npm start` does: it must be the real one.
  const port = await freePort();
  // The parts read their own settings from the process's environment (modules.ts): notebooks
  // run the stand-in, not a Jupyter that may be installed.
  process.env.AIEM_JUPYTER_COMMAND = "none";
  process.env.AIEM_H2O_SERVER = "stand-in";
  const t = await startTestHost({
    modules: createModuleFactories(),
    env: { AIEM_PORT: String(port), AIEM_PATH_URLS: "false", AIEM_SANDBOX_WARM_POOL: "0", ...options.env },
    ...(options.fallback ? { fallback: options.fallback } : {}),
  });
  const token = await t.token("root", { admin: true });
  const rest = async (method: string, path: string, body?: unknown, as = token) => {
    const res = await t.call(method, path, {
      headers: { authorization: `Bearer ${as}` },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, body: (await res.json()) as RestJson };
  };
  const ok = async (p: Promise<{ status: number; body: RestJson }>) => {
    const r = await p;
    if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const until = async (path: string, field: string, state: string) => {
    for (const deadline = Date.now() + 90_000; ; ) {
      const got = (await ok(rest("GET", path)))[field];
      if (got.state === state) return got;
      if (Date.now() > deadline) throw new Error(`${path} stayed ${got.state}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const ws = "workspaces/content";
  const dai = {
    profile: "workspaces/global/daiEngineProfiles/default",
    daiEngineVersion: "workspaces/global/daiEngineVersions/1.11.0",
  };
  const made = await Promise.all(
    ["a", "b"].map((id) => ok(rest("POST", `/v1/${ws}/daiEngines?daiEngineId=${id}`, dai))),
  );
  const nb = await ok(
    rest("POST", `/v1/${ws}/notebookEngines?notebookEngineId=n`, {
      profile: "workspaces/global/notebookEngineProfiles/default",
      notebookImage: "workspaces/global/notebookEngineImages/default",
    }),
  );
  const h2oMade = await ok(
    rest("POST", `/v1/${ws}/h2oEngines?h2oEngineId=h`, {
      profile: "workspaces/global/h2oEngineProfiles/default",
      h2oEngineVersion: "workspaces/global/h2oEngineVersions/3.46.0",
    }),
  );
  const engines = (await Promise.all(
    made.map((m) => until(`/v1/${m.daiEngine.name}`, "daiEngine", "STATE_RUNNING")),
  )) as [RestJson, RestJson];
  const h2o = await until(`/v1/${h2oMade.h2oEngine.name}`, "h2oEngine", "STATE_RUNNING");
  const notebook = await until(`/v1/${nb.notebookEngine.name}`, "notebookEngine", "STATE_RUNNING");
  const created = await ok(
    rest("POST", `/v1/${ws}/sandboxEngines?sandboxEngineId=s`, {
      sandboxEngineImage: IMAGE,
      sandboxEngineTemplate: TEMPLATE,
    }),
  );
  const sandbox = await until(`/v1/${created.sandboxEngine.name}`, "sandboxEngine", "STATE_RUNNING");
  await ok(
    rest("POST", `/v1/${sandbox.name}/processes?autoRun=true`, {
      command: "node",
      args: ["-e", PORT_PROGRAM, options.page],
    }),
  );
  await ok(rest("POST", `/v1/${sandbox.name}/ports?portId=8080`, {}));
  const reachable = await until(`/v1/${sandbox.name}/ports/8080`, "port", "STATE_READY");
  // READY says the port is routed, not that the program listens yet: wait for its page.
  const portUrl = new URL(reachable.internalUrl);
  for (const deadline = Date.now() + 60_000; ; ) {
    const answer = await hostRequest(t.url, portUrl.host, portUrl.pathname, { authorization: `Bearer ${token}` });
    if (answer.status === 200) break;
    if (Date.now() > deadline) throw new Error(`port 8080 answers ${answer.status}: ${answer.text}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    t,
    token,
    engines,
    notebook,
    h2o,
    sandbox,
    port: reachable,
    rest,
    async stop() {
      // Engines (and confined sandboxes) outlive the service by design: delete them first, so
      // that no stand-in server is left running once the test is over.
      const names = [...engines, notebook, h2o, sandbox].map((e) => e.name as string);
      const deadline = Date.now() + 60_000;
      try {
        await Promise.all(
          names.map(async (name) => {
            await rest("DELETE", `/v1/${name}`);
            while ((await rest("GET", `/v1/${name}`)).status !== 404 && Date.now() < deadline)
              await new Promise((r) => setTimeout(r, 200));
          }),
        );
      } finally {
        await t.stop();
      }
    },
  };
}

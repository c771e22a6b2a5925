// The stand-in for a Driverless AI or H2O server (and for notebooks where Jupyter is not
// installed) that the local runtime runs as one process per engine. Plain JavaScript started
// with `node` directly, so an engine starts in a fraction of a second. It serves, under the
// engine's base path: a login page (also at `oidc/login` for DAI, and H2O Flow's page), an API
// health endpoint, the effective configuration, its logs, a header echo (to check what the edge
// forwards) and a WebSocket echo. It writes every request to its log and its port to the engine
// directory once it listens.
import { createServer } from "node:http";
import { readFileSync, renameSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.AIEM_ENGINE_DIR;
const base = process.env.AIEM_ENGINE_BASE_PATH || "/";
if (!dir) {
  console.error("AIEM_ENGINE_DIR is required");
  process.exit(2);
}
const spec = JSON.parse(readFileSync(join(dir, "spec.json"), "utf8"));
const kind = spec.kind;
const product = kind === "dai" ? "Driverless AI" : kind === "h2o" ? "H2O" : "Notebook";
const logFile = join(dir, "logs", "engine.log");
const dataDir = join(dir, "data");
mkdirSync(dataDir, { recursive: true });
const marker = join(dataDir, "engine.json");
if (!existsSync(marker))
  writeFileSync(marker, `${JSON.stringify({ uid: spec.uid, created: new Date().toISOString() })}\n`);

const log = (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);

const json = (res, status, body) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
};

// Says what it is: a person who opens it must not take it for the product.
const loginPage = (res) => {
  const html = `<!doctype html><html><head><title>${product} login (stand-in)</title></head><body><h1>${product} ${spec.version}</h1><p>This is a stand-in server of AI Engine Manager, not ${product} itself.</p><form method="post" action="${base}login"><button>Log in</button></form></body></html>`;
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(html);
};

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://stand-in");
  log(`${req.method} ${url.pathname}`);
  if (!url.pathname.startsWith(base)) return json(res, 404, { error: "not under the base path" });
  const path = url.pathname.slice(base.length);
  switch (path) {
    case "":
    case "login":
      return loginPage(res);
    case "oidc/login":
      // Where a DAI engine's login_url points. Driverless AI starts its OIDC sign-in there; the
      // stand-in has no identity provider, so it says what it is instead.
      if (kind !== "dai") return json(res, 404, { error: `no such page: ${path}` });
      return loginPage(res);
    case "flow/index.html": {
      // Where an H2O engine's login_url points, as H2O-3 serves its Flow web UI.
      if (kind !== "h2o") return json(res, 404, { error: `no such page: ${path}` });
      const html = `<!doctype html><html><head><title>H2O Flow (stand-in)</title></head><body><h1>H2O Flow ${spec.version}</h1><p>This is a stand-in server of AI Engine Manager, not H2O itself.</p></body></html>`;
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return res.end(html);
    }
    case "api/health":
      return json(res, 200, {
        status: "ok",
        standIn: true,
        kind,
        product,
        version: spec.version,
        uid: spec.uid,
        cpu: spec.cpu,
        memoryBytes: spec.memoryBytes,
        nodeCount: spec.nodeCount,
      });
    case "api/config":
      return json(res, 200, spec.config ?? {});
    case "api/echo":
      // Cookies as asked (`?set-cookie=` repeated), to check what the edge lets through.
      if (url.searchParams.has("set-cookie")) res.setHeader("set-cookie", url.searchParams.getAll("set-cookie"));
      return json(res, 200, { method: req.method, url: req.url, headers: req.headers });
    case "api/crash": {
      const code = Number(url.searchParams.get("code") ?? "3");
      log(`crashing with exit code ${code} as asked`);
      json(res, 200, { crashing: code });
      return setTimeout(() => process.exit(code), 20);
    }
    case "logs": {
      let text = "";
      try {
        text = readFileSync(logFile, "utf8");
      } catch {}
      res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
      return res.end(text);
    }
    default:
      return json(res, 404, { error: `no such page: ${path}` });
  }
});

// A raw WebSocket handshake answer is enough for an echo: the bytes that follow come back as sent.
server.on("upgrade", (req, socket, head) => {
  const url = new URL(req.url ?? "/", "http://stand-in");
  log(`UPGRADE ${url.pathname}`);
  if (url.pathname !== `${base}ws`) {
    socket.end("HTTP/1.1 404 Not Found\r\nconnection: close\r\n\r\n");
    return;
  }
  const cookies = url.searchParams.getAll("set-cookie").map((c) => `set-cookie: ${c}\r\n`);
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n${cookies.join("")}\r\n`,
  );
  if (head.length > 0) socket.write(head);
  socket.pipe(socket);
  socket.on("error", () => socket.destroy());
});

server.listen(0, "127.0.0.1", () => {
  const port = server.address().port;
  const tmp = join(dir, `port.${process.pid}.tmp`);
  writeFileSync(tmp, String(port));
  renameSync(tmp, join(dir, "port"));
  log(`${product} ${spec.version} stand-in listening on 127.0.0.1:${port}${base} (engine ${spec.name})`);
});

const stop = (signal) => {
  log(`received ${signal}, stopping`);
  server.close();
  server.closeAllConnections?.();
  setTimeout(() => process.exit(0), 10).unref();
};
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("SIGINT", () => stop("SIGINT"));

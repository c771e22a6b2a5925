// Engine URLs through the edge (issue 6, part 7): `/engines/<uid>/...` with a bearer token or a
// one-time `?token=` that becomes an engine-scoped HttpOnly cookie; what reaches the engine (no
// token, no cookie of ours); engines that do not run; HTTP/2; and WebSockets through the route's
// upgrade handler.
import { createServer, request, type IncomingMessage } from "node:http";
import { connect as connectH2 } from "node:http2";
import { connect } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import type { RestJson } from "@aiem/kit/testing";
import type { EngineHttpRoute } from "./proxy.js";
import { deleteAllEngines, expectError, get, h, ok, post, res, runningEngine } from "./testing/rest-suite.js";

let name: string;
let uid: string;
let base: string;

describe("the engine proxy", () => {
  // Inside the describe, so it runs after rest.test.ts has started the host.
  beforeAll(async () => {
    name = await runningEngine("dai");
    const e = res(await get(`/v1/${name}`, { who: "alice" }));
    uid = e.uid;
    // The engine's context path, which stays served beside its name path (docs/adr/0210).
    base = `${h().url}/engines/${uid}/`;
  });

  const bearer = async (user = "alice") => ({ authorization: `Bearer ${await h().token(user)}` });

  describe("engine URLs", () => {
    it("trade a ?token= for an HttpOnly session cookie scoped to the engine, and drop the token from the URL", async () => {
      const token = await h().token("alice");
      const first = await fetch(`${base}api/echo?x=1&token=${token}`, { redirect: "manual" });
      expect(first.status).toBe(303);
      expect(first.headers.get("location")).toBe(`/engines/${uid}/api/echo?x=1`);
      const cookie = first.headers.get("set-cookie")!;
      // A session of this engine's path, never the token.
      expect(cookie).toMatch(
        new RegExp(`^aiem_session=[^;]+; Path=/engines/${uid}/; Max-Age=\\d+; HttpOnly; SameSite=Lax$`),
      );
      expect(cookie).not.toContain(token);
      const pair = cookie.split(";")[0]!;
      const forged = await fetch(`${base}api/echo`, { headers: { cookie: `aiem_session=${token}` } });
      expect(forged.status).toBe(401);
      const echo = (await (
        await fetch(`${h().url}${first.headers.get("location")}`, { headers: { cookie: `${pair}; theirs=1` } })
      ).json()) as RestJson;
      expect(echo.url).toBe(`/engines/${uid}/api/echo?x=1`);
      // The engine sees neither the token nor our cookie, but keeps its own cookies and the host.
      expect(echo.headers.authorization).toBeUndefined();
      expect(echo.headers.cookie).toBe("theirs=1");
      expect(echo.headers.host).toBe(new URL(h().url).host);
      expect(echo.headers["x-forwarded-host"]).toBe(new URL(h().url).host);
      expect(echo.headers["x-forwarded-proto"]).toBe("http");
    });

    it("keep our cookies from the engine, its cookies host-only, and never let it set ours", async () => {
      const asked = [
        "theirs=1; Domain=localhost; Path=/",
        "wide=2; path=/; DOMAIN=.engines.localhost; HttpOnly",
        "aiem_engine_token=planted; Path=/",
        "__Host-aiem_session=planted; Secure; Path=/",
      ];
      const query = asked.map((c) => `set-cookie=${encodeURIComponent(c)}`).join("&");
      const answer = await fetch(`${base}api/echo?${query}`, {
        headers: {
          ...(await bearer()),
          cookie: "aiem_port_token=p; theirs=1; __Host-aiem_session=s; __Secure-aiem_x=y",
        },
      });
      const echo = (await answer.json()) as RestJson;
      expect(echo.headers.authorization).toBeUndefined();
      expect(echo.headers.cookie).toBe("theirs=1");
      expect(answer.headers.getSetCookie()).toEqual(["theirs=1; Path=/", "wide=2; path=/; HttpOnly"]);
    });

    it("forward methods and bodies, and answer with the engine's status", async () => {
      const posted = await fetch(`${base}api/echo`, {
        method: "POST",
        headers: { ...(await bearer()), "content-type": "text/plain" },
        body: "hello",
      });
      expect(((await posted.json()) as RestJson).method).toBe("POST");
      const missing = await fetch(`${base}no/such/page`, { headers: await bearer() });
      expect(missing.status).toBe(404);
      const bare = await fetch(`${h().url}/engines/${uid}`, { headers: await bearer(), redirect: "manual" });
      expect(bare.status).toBe(301);
      expect(bare.headers.get("location")).toBe(`/engines/${uid}/`);
    });

    it("answer unknown engines with 404, engines that do not run with their state", async () => {
      const unknown = await fetch(`${h().url}/engines/00000000-0000-4000-8000-000000000000/`, {
        headers: await bearer(),
      });
      expect(unknown.status).toBe(404);
      expect(((await unknown.json()) as RestJson).code).toBe(5);
      expect((await fetch(`${h().url}/engines/not-a-uid/`, { headers: await bearer() })).status).toBe(404);
      const other = await runningEngine("notebook");
      const otherUid = res(await get(`/v1/${other}`, { who: "alice" })).uid;
      ok(await post(`/v1/${other}:pause`, { who: "alice" }));
      await h().waitForState(other, "STATE_PAUSED");
      const paused = await fetch(`${h().url}/engines/${otherUid}/`, { headers: await bearer() });
      expect(paused.status).toBe(400);
      const body = (await paused.json()) as RestJson;
      expect(body.code).toBe(9);
      expect(body.message).toContain("STATE_PAUSED");
      h().runtime.hold(other, "ready");
      ok(await post(`/v1/${other}:resume`, { who: "alice" }));
      const starting = await fetch(`${h().url}/engines/${otherUid}/`, { headers: await bearer() });
      expect(starting.status).toBe(503);
      expect(((await starting.json()) as RestJson).message).toMatch(/STATE_STARTING; retry shortly/);
      h().runtime.release(other, "ready");
      await h().waitForState(other, "STATE_RUNNING");
    });

    it("work over HTTP/2 (h2c) as well", async () => {
      const session = connectH2(h().url);
      try {
        const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          void bearer().then((headers) => {
            const stream = session.request({ ":path": `/engines/${uid}/api/health`, ...headers });
            let status = 0;
            let body = "";
            stream.on("response", (hs) => (status = Number(hs[":status"])));
            stream.on("data", (d: Buffer) => (body += d.toString()));
            stream.on("end", () => resolve({ status, body }));
            stream.on("error", reject);
          });
        });
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.body)).toMatchObject({ status: "ok", kind: "dai" });
      } finally {
        session.close();
      }
    });
  });

  describe("WebSockets", () => {
    /** A plain server that mounts the engine route as a host that wires upgrades would. */
    async function withRouteServer<T>(fn: (port: number) => Promise<T>): Promise<T> {
      const route = h().engine.httpRoutes[0] as EngineHttpRoute;
      const server = createServer((req, res) => route.handler(req, res));
      server.on("upgrade", (req: IncomingMessage, socket, head) => route.upgrade(req, socket, head));
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        return await fn((server.address() as { port: number }).port);
      } finally {
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    }

    function handshake(
      port: number,
      path: string,
      headers: Record<string, string>,
    ): Promise<{ head: string; socket: import("node:net").Socket }> {
      return new Promise((resolve, reject) => {
        const socket = connect(port, "127.0.0.1", () => {
          const lines = [
            `GET ${path} HTTP/1.1`,
            "host: 127.0.0.1",
            "connection: Upgrade",
            "upgrade: websocket",
            "sec-websocket-version: 13",
            "sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==",
          ];
          for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
          socket.write(`${lines.join("\r\n")}\r\n\r\n`);
        });
        let seen = "";
        const onData = (d: Buffer) => {
          seen += d.toString("latin1");
          const end = seen.indexOf("\r\n\r\n");
          if (end >= 0) {
            socket.off("data", onData);
            resolve({ head: seen.slice(0, end), socket });
          }
        };
        socket.on("data", onData);
        socket.on("error", reject);
      });
    }

    it("are proxied both ways once authenticated; refused without a token", async () => {
      await withRouteServer(async (port) => {
        const { head, socket } = await handshake(port, `/engines/${uid}/ws`, await bearer());
        expect(head.split("\r\n")[0]).toBe("HTTP/1.1 101 Switching Protocols");
        const echoed = await new Promise<string>((resolve) => {
          socket.once("data", (d: Buffer) => resolve(d.toString()));
          socket.write("ping through the proxy");
        });
        expect(echoed).toBe("ping through the proxy");
        socket.destroy();
        // The handshake's answer is the engine's: its cookies pass host-only, ours never.
        const asked = ["ws=1; Domain=localhost; Path=/", "aiem_engine_token=planted"];
        const cookies = await handshake(
          port,
          `/engines/${uid}/ws?${asked.map((c) => `set-cookie=${encodeURIComponent(c)}`).join("&")}`,
          await bearer(),
        );
        cookies.socket.destroy();
        expect(cookies.head.split("\r\n").filter((l) => /^set-cookie:/i.test(l))).toEqual(["set-cookie: ws=1; Path=/"]);
        const refused = await handshake(port, `/engines/${uid}/ws`, {});
        expect(refused.head.split("\r\n")[0]).toBe("HTTP/1.1 401 Unauthorized");
        refused.socket.destroy();
        const other = await handshake(port, `/engines/${uid}/ws`, await bearer("bob"));
        expect(other.head.split("\r\n")[0]).toContain("404");
        other.socket.destroy();
        // Plain requests still work through the same route.
        const status = await new Promise<number>((resolve) => {
          void bearer().then((headers) =>
            request({ port, path: `/engines/${uid}/api/health`, headers }, (r) => resolve(r.statusCode ?? 0)).end(),
          );
        });
        expect(status).toBe(200);
      });
    });
  });

  describe("failures", () => {
    it("show an engine whose process died as FAILED with the reason", async () => {
      const victim = await runningEngine("h2o");
      const r = await fetch(`${res(await get(`/v1/${victim}`, { who: "alice" })).apiUrl}/api/crash?code=5`, {
        headers: await bearer(),
      });
      expect(r.status).toBe(200);
      const failed = await h().waitForState(victim, "STATE_FAILED");
      expect(failed.failureMessage).toBe("the engine process exited with code 5");
      expectError(await post(`/v1/${victim}:downloadLogs`, { who: "bob" }), "NOT_FOUND");
      const logs = Buffer.from(
        ok(await post(`/v1/${victim}:downloadLogs`, { who: "alice" })).logs.data,
        "base64",
      ).toString();
      expect(logs).toContain("crashing with exit code 5");
    });
  });
});

describe("after the suite", () => {
  it("deletes every engine it made", deleteAllEngines, 90_000);
});

// Ports over REST, and their traffic through the edge: port ids 1024-65535, display names, the
// update mask; internal URLs for the creator's token only (header, or ?token= once, then a
// cookie), public URLs only while public; every sandbox has its own loopback, so two sandboxes
// serve the same port without colliding.
import { beforeAll, describe, expect, it } from "vitest";
import type { RestJson } from "@aiem/kit/testing";
import { expectError, ok, sharedHarness, sleep, type SandboxHarness } from "./testing/index.js";

let h: SandboxHarness;
let a: RestJson;
let b: RestJson;

const SERVER = `
const http = require("http");
http.createServer((q, s) => {
  let body = "";
  q.on("data", (d) => (body += d));
  q.on("end", () => {
    if (q.url.startsWith("/redirect")) { s.writeHead(302, { location: "/login?next=1" }); return s.end(); }
    if (q.url.startsWith("/hang")) { s.writeHead(200); s.write("started"); return; }
    if (q.url.startsWith("/cookies")) {
      s.setHeader("set-cookie", [
        "theirs=1; Domain=localhost; Path=/; HttpOnly",
        "wide=2; path=/; domain=.sandboxes.localhost",
        "aiem_port_token=planted; Path=/",
        "__Host-aiem_session=planted; Secure; Path=/",
        "__secure-AIEM_x=planted; Secure",
      ]);
    }
    s.setHeader("content-type", "application/json");
    s.end(JSON.stringify({ who: process.argv[1], method: q.method, url: q.url, headers: q.headers, body }));
  });
}).listen(Number(process.argv[2]), "127.0.0.1");`;

async function serve(sandbox: RestJson, who: string, port = 8080) {
  ok(
    await h.rest("POST", `/v1/${sandbox.name}/processes?autoRun=true`, {
      body: { command: "node", args: ["-e", SERVER, who, String(port)] },
    }),
  );
}

async function untilServing(url: string, headers: Record<string, string>) {
  for (let i = 0; ; i++) {
    const res = await fetch(url, { headers });
    if (res.status !== 502 || i > 100) return res;
    await res.arrayBuffer();
    await sleep(50);
  }
}

beforeAll(async () => {
  h = await sharedHarness();
  [a, b] = await Promise.all([h.createSandbox("ports-a"), h.createSandbox("ports-b")]);
  await Promise.all([serve(a, "A"), serve(b, "B")]);
});

const bearer = async (user: string) => ({ authorization: `Bearer ${await h.token(user)}` });

describe("ports: the resource", () => {
  it("creates ports 1024-65535 with URLs through the edge; public ones get a public URL", async () => {
    const created = ok(
      await h.rest("POST", `/v1/${a.name}/ports?portId=8080`, { body: { displayName: "web", internalUrl: "ignored" } }),
    ).port;
    expect(created).toMatchObject({
      name: `${a.name}/ports/8080`,
      displayName: "web",
      public: false,
      internalUrl: `${h.t.url}/sandboxes/${a.uid}/ports/8080/`,
      publicUrl: "",
      creator: "users/alice",
      updater: "users/alice",
    });
    const pub = ok(await h.rest("POST", `/v1/${a.name}/ports?portId=65535`, { body: { public: true } })).port;
    expect(pub.publicUrl).toBe(`${h.t.url}/sandboxes/${a.uid}/public/65535/`);
    ok(await h.rest("POST", `/v1/${a.name}/ports?portId=1024`, { body: {} }));
    for (const bad of ["80", "1023", "65536", "http", "08080", "99999999999"]) {
      expectError(
        await h.rest("POST", `/v1/${a.name}/ports?portId=${bad}`, { body: {} }),
        "INVALID_ARGUMENT",
        "port_id",
      );
    }
    expectError(await h.rest("POST", `/v1/${a.name}/ports`, { body: {} }), "INVALID_ARGUMENT", "port_id");
    expectError(
      await h.rest("POST", `/v1/${a.name}/ports?portId=8080`, { body: {} }),
      "ALREADY_EXISTS",
      `${a.name}/ports/8080`,
    );
    expectError(
      await h.rest("POST", `/v1/${a.name}/ports?portId=2000`, { body: { displayName: "d".repeat(64) } }),
      "INVALID_ARGUMENT",
      "port.display_name",
    );
  });

  it("gets, lists by port number, updates display_name and public, and deletes", async () => {
    expect(ok(await h.rest("GET", `/v1/${a.name}/ports/8080`)).port.displayName).toBe("web");
    const list = ok(await h.rest("GET", `/v1/${a.name}/ports`)).ports.map((p: RestJson) => p.name.split("/").pop());
    expect(list).toEqual(["1024", "8080", "65535"]);
    const page = ok(await h.rest("GET", `/v1/${a.name}/ports?pageSize=2`));
    expect(page.ports).toHaveLength(2);
    expect(
      ok(await h.rest("GET", `/v1/${a.name}/ports?pageSize=2&pageToken=${page.nextPageToken}`)).ports[0].name,
    ).toBe(`${a.name}/ports/65535`);
    const updated = ok(
      await h.rest("PATCH", `/v1/${a.name}/ports/1024?updateMask=display_name,public`, {
        body: { displayName: "renamed", public: true },
      }),
    ).port;
    expect(updated).toMatchObject({
      displayName: "renamed",
      public: true,
      publicUrl: `${h.t.url}/sandboxes/${a.uid}/public/1024/`,
    });
    expect(Date.parse(updated.updateTime)).toBeGreaterThanOrEqual(Date.parse(updated.createTime));
    const priv = ok(
      await h.rest("PATCH", `/v1/${a.name}/ports/1024?updateMask=public`, {
        body: { public: false, displayName: "not applied" },
      }),
    ).port;
    expect(priv).toMatchObject({ displayName: "renamed", public: false, publicUrl: "" });
    ok(await h.rest("PATCH", `/v1/${a.name}/ports/1024?updateMask=*`, { body: { displayName: "all" } }));
    const patch = (mask: string, body: Record<string, unknown> = {}) =>
      h.rest("PATCH", `/v1/${a.name}/ports/1024?updateMask=${mask}`, { body });
    expectError(await h.rest("PATCH", `/v1/${a.name}/ports/1024`, { body: {} }), "INVALID_ARGUMENT", "update_mask");
    expectError(await patch("displayName"), "INVALID_ARGUMENT", "update_mask");
    expectError(await patch("internal_url"), "INVALID_ARGUMENT", "update_mask");
    expectError(await patch("display_name", { displayName: "x".repeat(64) }), "INVALID_ARGUMENT", "port.display_name");
    expectError(await h.rest("PATCH", `/v1/${a.name}/ports/4444?updateMask=public`, { body: {} }), "NOT_FOUND");
    ok(await h.rest("DELETE", `/v1/${a.name}/ports/1024`));
    expectError(await h.rest("GET", `/v1/${a.name}/ports/1024`), "NOT_FOUND", `${a.name}/ports/1024`);
    expectError(await h.rest("DELETE", `/v1/${a.name}/ports/1024`), "NOT_FOUND");
    expectError(await h.rest("GET", `/v1/${a.name}/ports/80`), "INVALID_ARGUMENT", "name");
  });
});

describe("ports: state", () => {
  it("is PENDING in the answer to its creation, READY once routed whether or not a program listens, FAILED once the sandbox stops", async () => {
    const c = await h.createSandbox("ports-state");
    const created = ok(await h.rest("POST", `/v1/${c.name}/ports?portId=8081`, { body: {} })).port;
    expect(created).toMatchObject({ state: "STATE_PENDING", failureReason: "" });
    // Nothing listens yet: the port is routed all the same, and the proxy says what is missing.
    expect(ok(await h.rest("GET", `/v1/${c.name}/ports/8081`)).port).toMatchObject({
      state: "STATE_READY",
      failureReason: "",
    });
    const empty = await fetch(created.internalUrl, { headers: await bearer("alice") });
    expect([empty.status, ((await empty.json()) as RestJson).message]).toEqual([
      502,
      "nothing accepts connections on port 8081 in the sandbox",
    ]);
    await serve(c, "S", 8081);
    ok(await h.rest("POST", `/v1/${c.name}/ports?portId=8082`, { body: {} }));
    const states = ok(await h.rest("GET", `/v1/${c.name}/ports`)).ports.map((p: RestJson) => [
      p.name.split("/").pop(),
      p.state,
    ]);
    expect(states).toEqual([
      ["8081", "STATE_READY"],
      ["8082", "STATE_READY"],
    ]);
    // Once the program listens, the proxy reaches it.
    expect((await untilServing(created.internalUrl, await bearer("alice"))).status).toBe(200);
    expectError(
      await h.rest("PATCH", `/v1/${c.name}/ports/8081?updateMask=state`, { body: { state: "STATE_FAILED" } }),
      "INVALID_ARGUMENT",
      "update_mask",
    );
    ok(await h.rest("POST", `/v1/${c.name}:terminate`, { body: {} }));
    await h.waitState(c.name, "STATE_TERMINATED");
    expect(ok(await h.rest("GET", `/v1/${c.name}/ports/8081`)).port).toMatchObject({
      state: "STATE_FAILED",
      failureReason: `${c.name} is STATE_TERMINATED; its ports are served only while it runs`,
    });
  });
});

describe("ports: traffic through the edge", () => {
  it("forwards to the program with the creator's bearer token, which the program never sees", async () => {
    const url = `${h.t.url}/sandboxes/${a.uid}/ports/8080/api/items?x=1`;
    const res = await untilServing(url, await bearer("alice"));
    expect(res.status).toBe(200);
    const seen: RestJson = await res.json();
    expect(seen).toMatchObject({ who: "A", method: "GET", url: "/api/items?x=1" });
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers.host).toBe("localhost:8080");
    expect(seen.headers["x-forwarded-prefix"]).toBe(`/sandboxes/${a.uid}/ports/8080`);
    const post = await fetch(url, {
      method: "POST",
      headers: { ...(await bearer("alice")), "content-type": "text/plain" },
      body: "payload",
    });
    expect((await post.json()) as RestJson).toMatchObject({ method: "POST", body: "payload" });
  });

  it("refuses everyone else on the internal URL: no token 401, another member 404 as if missing, an administrator 403", async () => {
    const url = `${h.t.url}/sandboxes/${a.uid}/ports/8080/`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: "Bearer not-a-token" } })).status).toBe(401);
    const bob = await fetch(url, { headers: await bearer("bob") });
    expect([bob.status, await bob.text()]).toEqual([
      404,
      expect.stringContaining("no reachable port 8080 in this sandbox"),
    ]);
    expect((await fetch(url, { headers: await bearer("root") })).status).toBe(403);
    expect((await fetch(`${url}?token=${await h.token("bob")}`, { redirect: "manual" })).status).toBe(404);
  });

  it("takes ?token= once, keeps a session of that port only in a cookie, and strips both before the program", async () => {
    const base = `${h.t.url}/sandboxes/${a.uid}/ports/8080`;
    const token = await h.token("alice");
    const first = await fetch(`${base}/page?keep=1&token=${token}`, { redirect: "manual" });
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe(`/sandboxes/${a.uid}/ports/8080/page?keep=1`);
    const cookie = first.headers.get("set-cookie")!;
    expect(cookie).toMatch(
      new RegExp(`^aiem_session=[^;]+; Path=/sandboxes/${a.uid}/ports/8080/; Max-Age=\\d+; HttpOnly; SameSite=Lax$`),
    );
    // The cookie holds a session of this port, not the token: good nowhere else, and the token
    // itself in its place opens nothing.
    expect(cookie).not.toContain(token);
    const jar = cookie.split(";")[0]!;
    ok(await h.rest("POST", `/v1/${b.name}/ports?portId=8081`, { body: {} }));
    const elsewhere = await fetch(`${h.t.url}/sandboxes/${b.uid}/ports/8081/`, { headers: { cookie: jar } });
    expect(elsewhere.status).toBe(401);
    const forged = await fetch(`${base}/page`, { headers: { cookie: `aiem_session=${token}` } });
    expect(forged.status).toBe(401);
    const res = await fetch(`${base}/page?keep=1`, { headers: { cookie: `${jar}; app=1` } });
    const seen: RestJson = await res.json();
    expect(seen.url).toBe("/page?keep=1");
    expect(seen.headers.cookie).toBe("app=1");
    // Without the trailing slash, the browser is sent to the port's root.
    const bare = await fetch(base, { redirect: "manual", headers: await bearer("alice") });
    expect(bare.status).toBe(308);
    expect(bare.headers.get("location")).toBe(`/sandboxes/${a.uid}/ports/8080/`);
    // Redirects of the program stay under the port's path.
    const redirect = await fetch(`${base}/redirect`, { redirect: "manual", headers: await bearer("alice") });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe(`/sandboxes/${a.uid}/ports/8080/login?next=1`);
  });

  it("opens the public URL to anyone only while the port is public", async () => {
    const pub = `${h.t.url}/sandboxes/${a.uid}/public/8080/hello`;
    expect((await fetch(pub)).status).toBe(404);
    ok(await h.rest("PATCH", `/v1/${a.name}/ports/8080?updateMask=public`, { body: { public: true } }));
    const open = await fetch(pub);
    expect(open.status).toBe(200);
    expect(((await open.json()) as RestJson).url).toBe("/hello");
    ok(await h.rest("PATCH", `/v1/${a.name}/ports/8080?updateMask=public`, { body: { public: false } }));
    expect((await fetch(pub)).status).toBe(404);
    // The internal URL still needs the token while public.
    expect((await fetch(`${h.t.url}/sandboxes/${a.uid}/ports/8080/`)).status).toBe(401);
  });

  it("hands a public port's program neither the visitor's credentials nor our cookies, and keeps its cookies host-only", async () => {
    ok(await h.rest("PATCH", `/v1/${a.name}/ports/8080?updateMask=public`, { body: { public: true } }));
    try {
      const res = await fetch(`${h.t.url}/sandboxes/${a.uid}/public/8080/cookies`, {
        headers: {
          ...(await bearer("bob")),
          "proxy-authorization": "Basic Ym9iOnNlY3JldA==",
          cookie: `aiem_port_token=${await h.token("bob")}; app=1; __Host-aiem_session=s; aiem_engine_token=e; other=2`,
        },
      });
      expect(res.status).toBe(200);
      const seen: RestJson = await res.json();
      expect(seen.headers.authorization).toBeUndefined();
      expect(seen.headers["proxy-authorization"]).toBeUndefined();
      expect(seen.headers.cookie).toBe("app=1; other=2");
      expect(res.headers.getSetCookie()).toEqual(["theirs=1; Path=/; HttpOnly", "wide=2; path=/"]);
    } finally {
      ok(await h.rest("PATCH", `/v1/${a.name}/ports/8080?updateMask=public`, { body: { public: false } }));
    }
  });

  it("gives each sandbox its own loopback: the same port in two sandboxes reaches two programs", async () => {
    ok(await h.rest("POST", `/v1/${b.name}/ports?portId=8080`, { body: {} }));
    const fromA: RestJson = await (
      await fetch(`${h.t.url}/sandboxes/${a.uid}/ports/8080/`, { headers: await bearer("alice") })
    ).json();
    const fromB: RestJson = await (
      await untilServing(`${h.t.url}/sandboxes/${b.uid}/ports/8080/`, await bearer("alice"))
    ).json();
    expect([fromA.who, fromB.who]).toEqual(["A", "B"]);
  });

  it("answers 404 for ports not made reachable, 502 where nothing listens, and cuts connections of a deleted port", async () => {
    await serve(a, "A9", 9090);
    await sleep(300);
    expect((await fetch(`${h.t.url}/sandboxes/${a.uid}/ports/9090/`, { headers: await bearer("alice") })).status).toBe(
      404,
    );
    ok(await h.rest("POST", `/v1/${a.name}/ports?portId=7777`, { body: {} }));
    const nobody = await fetch(`${h.t.url}/sandboxes/${a.uid}/ports/7777/`, { headers: await bearer("alice") });
    expect(nobody.status).toBe(502);
    expect(((await nobody.json()) as RestJson).message).toContain("nothing accepts connections on port 7777");
    expect(
      (
        await fetch(`${h.t.url}/sandboxes/00000000-0000-0000-0000-000000000000/ports/8080/`, {
          headers: await bearer("alice"),
        })
      ).status,
    ).toBe(404);

    const hanging = await fetch(`${h.t.url}/sandboxes/${a.uid}/ports/8080/hang`, { headers: await bearer("alice") });
    const reader = hanging.body!.getReader();
    expect(Buffer.from((await reader.read()).value!).toString()).toBe("started");
    ok(await h.rest("DELETE", `/v1/${a.name}/ports/8080`));
    const ended = await reader.read().then(
      (r) => (r.done ? "closed" : "data"),
      () => "closed",
    );
    expect(ended).toBe("closed");
    expect((await fetch(`${h.t.url}/sandboxes/${a.uid}/ports/8080/`, { headers: await bearer("alice") })).status).toBe(
      404,
    );
  });

  it("counts traffic as activity, and serves nothing once the sandbox stops", async () => {
    // 2 s without traffic ends it; traffic every 300 ms keeps it alive, even with slow calls.
    const quick = (await h.catalogueFixture("quick-ports", { maxIdleDuration: "2s" })).template;
    const c = await h.createSandbox("ports-c", { template: quick });
    await serve(c, "C");
    ok(await h.rest("POST", `/v1/${c.name}/ports?portId=8080`, { body: { public: true } }));
    const url = `${h.t.url}/sandboxes/${c.uid}/public/8080/`;
    expect((await untilServing(url, {})).status).toBe(200);
    for (let i = 0; i < 9; i++) {
      await sleep(300);
      expect((await fetch(url)).status).toBe(200);
    }
    expect(ok(await h.rest("GET", `/v1/${c.name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
    await h.waitState(c.name, "STATE_TERMINATED", 10_000);
    const after = await fetch(url);
    expect(after.status).toBe(503);
  });
});

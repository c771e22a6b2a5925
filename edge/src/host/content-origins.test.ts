// User content at origins of its own, through the real all-in-one server: engine UIs at
// `{uid}.engines.localhost:<port>`, sandbox ports at `{port}-{uid}.sandboxes.localhost:<port>`;
// nothing else at those origins, no user content for browsers at the API's; WebSockets at both.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RestJson } from "@aiem/kit/testing";
import { createLogger } from "@aiem/kit/logger";
import { startTestHost } from "../testing/test-host.js";
import { echo, hostOf, hostRequest, upgradeRequest } from "../testing/content-client.js";
import { startContentFixture, type ContentFixture } from "../testing/content-fixture.js";
import { decide } from "./content-origins.js";

const uid = "0b6a3e8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

describe("content origin decisions", () => {
  const routes = ["/engines/", "/workspaces/", "/sandboxes/"].map((prefix) => ({ prefix, handler: () => undefined }));
  const options = { domain: () => "localhost", pathUrls: false, routes };
  const req = (host: string, url: string, headers: Record<string, string> = {}) =>
    ({ url, headers: { host, ...headers } }) as never;

  it("sends a port's origin to the port route with the path rewritten, and marks it; a forged mark is dropped", () => {
    const r = req(`5000-${uid}.sandboxes.localhost:8080`, "/a?b=1", { "x-aiem-content-origin": "forged" });
    expect(decide(options, r)).toMatchObject({ kind: "route", route: { prefix: "/sandboxes/" } });
    expect((r as { url: string }).url).toBe(`/sandboxes/${uid}/ports/5000/a?b=1`);
    expect((r as { headers: Record<string, string> }).headers["x-aiem-content-origin"]).toBe("1");
    const api = req("127.0.0.1:8080", "/v1/x", { "x-aiem-content-origin": "forged", cookie: "from_port=1" });
    expect(decide(options, api)).toEqual({ kind: "api" });
    expect((api as { headers: Record<string, string> }).headers["x-aiem-content-origin"]).toBeUndefined();
    expect((api as { headers: Record<string, string> }).headers.cookie).toBeUndefined();
  });

  it("serves only the engine's own context path at its origin", () => {
    expect(decide(options, req(`${uid}.engines.localhost`, `/engines/${uid}/x`))).toMatchObject({ kind: "route" });
    expect(decide(options, req(`${uid}.engines.localhost`, "/"))).toMatchObject({
      kind: "answer",
      status: 302,
      location: `/engines/${uid}/`,
    });
    const byName = req(`${uid}.engines.localhost`, "/workspaces/w/h2oEngines/h/3/Cloud", {
      "x-aiem-engine-origin": "forged",
    });
    expect(decide(options, byName)).toMatchObject({ kind: "route", route: { prefix: "/workspaces/" } });
    expect((byName as { headers: Record<string, string> }).headers["x-aiem-engine-origin"]).toBe(uid);
    for (const other of [
      "/v1/workspaces/default/daiEngines",
      "/engines/11111111-1c2d-4e5f-8a9b-0c1d2e3f4a5b/",
      `/engines/${uid}x/`,
      "/ai-engine-manager/",
      "/healthz",
    ]) {
      expect(decide(options, req(`${uid}.engines.localhost`, other)), other).toMatchObject({
        kind: "answer",
        status: 404,
      });
    }
  });

  it("keeps user content off the API's origin unless path URLs are on; engine paths answer programs with a bearer only", () => {
    expect(
      decide(options, req("localhost:8080", `/sandboxes/${uid}/ports/5000/`, { authorization: "Bearer x" })),
    ).toMatchObject({ status: 404 });
    expect(decide(options, req("localhost:8080", `/engines/${uid}/`))).toMatchObject({ status: 404 });
    expect(decide(options, req("localhost:8080", `/engines/${uid}/api`, { authorization: "Bearer x" }))).toEqual({
      kind: "api",
      programmatic: true,
    });
    expect(
      decide(options, req("localhost:8080", `/engines/${uid}/?token=t`, { authorization: "Bearer x" })),
    ).toMatchObject({ status: 404 });
    const withCookie = req("localhost:8080", `/engines/${uid}/`, { authorization: "Bearer x", cookie: "a=b" });
    expect(decide(options, withCookie)).toEqual({ kind: "api", programmatic: true });
    expect((withCookie as { headers: Record<string, string> }).headers.cookie).toBeUndefined();
    expect(decide({ ...options, pathUrls: true }, req("localhost:8080", `/sandboxes/${uid}/ports/5000/`))).toEqual({
      kind: "api",
    });
  });
});

describe("the path-URL opt-in", () => {
  it("logs a warning at start when set, and none otherwise", async () => {
    for (const [value, warned] of [
      ["true", true],
      ["false", false],
    ] as const) {
      const lines: string[] = [];
      const t = await startTestHost({
        env: { AIEM_PATH_URLS: value },
        logger: createLogger({ write: (line) => lines.push(line) }),
      });
      await t.stop();
      const warnings = lines
        .map((l) => JSON.parse(l) as { level: string; msg: string })
        .filter((l) => l.level === "warn" && l.msg.includes("AIEM_PATH_URLS"));
      expect(warnings.length, value).toBe(warned ? 1 : 0);
    }
  });
});

describe("content origins through the all-in-one server", () => {
  let f: ContentFixture;
  let a: RestJson;
  let b: RestJson;
  const bearer = () => ({ authorization: `Bearer ${f.token}` });

  beforeAll(async () => {
    f = await startContentFixture({ page: "<p>port page</p>" });
    [a, b] = f.engines;
  }, 180_000);
  afterAll(async () => f?.stop());

  it("hands out engine login URLs at each engine's origin and api_url on the API's, both by name", () => {
    const port = new URL(f.t.url).port;
    expect(a.loginUrl).toBe(`http://${a.uid}.engines.localhost:${port}/${a.name}/oidc/login`);
    expect(a.apiUrl).toBe(`${f.t.url}/${a.name}`);
    expect(f.h2o.loginUrl).toBe(`http://${f.h2o.uid}.engines.localhost:${port}/${f.h2o.name}/flow/index.html`);
    expect(f.port.internalUrl).toBe(`http://8080-${f.sandbox.uid}.sandboxes.localhost:${port}/`);
  });

  it("serves an engine at its origin with a bearer, or a ?token= exchanged for a session of that origin", async () => {
    const host = hostOf(a.loginUrl);
    const path = new URL(a.loginUrl).pathname;
    expect((await hostRequest(f.t.url, host, path)).status).toBe(401);
    expect((await hostRequest(f.t.url, host, path, bearer())).status).toBe(200);
    const exchanged = await hostRequest(f.t.url, host, `${path}?token=${f.token}`);
    expect(exchanged.status).toBe(303);
    const cookie = String(exchanged.headers["set-cookie"]);
    // A `__Host-` session of this origin (localhost names take Secure cookies over http), never the token.
    expect(cookie).toMatch(/^__Host-aiem_session=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    expect(cookie).not.toContain(f.token);
    const withCookie = await hostRequest(f.t.url, host, path, { cookie: cookie.split(";")[0]! });
    expect(withCookie.status).toBe(200);
    // Good at this origin only.
    const otherPath = new URL(b.loginUrl).pathname;
    expect((await hostRequest(f.t.url, hostOf(b.loginUrl), otherPath, { cookie: cookie.split(";")[0]! })).status).toBe(
      401,
    );
    // The origin's root leads to the engine's context path, which stays served (docs/adr/0210).
    expect((await hostRequest(f.t.url, host, "/")).headers.location).toBe(`/engines/${a.uid}/`);
    expect((await hostRequest(f.t.url, host, `/engines/${a.uid}/`, { cookie: cookie.split(";")[0]! })).status).toBe(
      200,
    );
  });

  it("hands out a notebook's access URL with a single-use ticket that becomes a session of its origin", async () => {
    const { uri } = (await f.rest("GET", `/v1/${f.notebook.name}:access`)).body;
    const url = new URL(uri);
    expect(url.host).toBe(`${f.notebook.uid}.engines.localhost:${new URL(f.t.url).port}`);
    expect(url.pathname).toBe(`/engines/${f.notebook.uid}/`);
    const ticket = url.searchParams.get("aiem_ticket")!;
    expect(ticket).toBeTruthy();
    expect(uri).not.toContain(f.token);
    const path = `${url.pathname}${url.search}`;
    // Good at its own origin only.
    const elsewhere = await hostRequest(f.t.url, hostOf(a.loginUrl), `/engines/${a.uid}/?aiem_ticket=${ticket}`);
    expect(elsewhere.status).toBe(401);
    expect(JSON.parse(elsewhere.text).message).toContain("another origin");
    const exchanged = await hostRequest(f.t.url, url.host, path);
    expect(exchanged.status).toBe(303);
    expect(exchanged.headers.location).toBe(url.pathname);
    const cookie = String(exchanged.headers["set-cookie"]);
    expect(cookie).toMatch(/^__Host-aiem_session=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    expect(cookie).not.toContain(f.token);
    expect(exchanged.headers["referrer-policy"]).toBe("no-referrer");
    expect((await hostRequest(f.t.url, url.host, url.pathname, { cookie: cookie.split(";")[0]! })).status).toBe(200);
    // Once only.
    const again = await hostRequest(f.t.url, url.host, path);
    expect(again.status).toBe(401);
    expect(JSON.parse(again.text).message).toContain("used already");
    // A forged or altered one is refused.
    expect(
      (await hostRequest(f.t.url, url.host, `${url.pathname}?aiem_ticket=${ticket.slice(0, -4)}AAAA`)).status,
    ).toBe(401);
  });

  it.each(["h2o", "dai"])("serves a %s engine's name path at its own origin only", async (kind) => {
    const [engine, other] = kind === "h2o" ? [f.h2o, a] : [a, f.h2o];
    const path = `/${engine.name}/api/health`;
    const own = await hostRequest(f.t.url, hostOf(engine.loginUrl), path, bearer());
    expect(own.status, own.text).toBe(200);
    expect(JSON.parse(own.text)).toMatchObject({ uid: engine.uid });
    const elsewhere = await hostRequest(f.t.url, hostOf(other.loginUrl), path, bearer());
    expect(elsewhere.status).toBe(404);
    expect(JSON.parse(elsewhere.text).message).toBe("this origin serves only its own engine");
    // At the API's origin it is there for programs, as api_url is.
    expect((await hostRequest(f.t.url, hostOf(f.t.url), path, bearer())).status).toBe(200);
  });

  it("serves nothing else at an engine's origin: not another engine, not the API, not health", async () => {
    const host = hostOf(a.loginUrl);
    const around = [`/engines/${a.uid}/../${b.uid}/api/health`, `/engines/${a.uid}/%2e%2e/${b.uid}/api/health`];
    for (const other of [`/engines/${b.uid}/`, ...around, "/v1/workspaces/content/daiEngines", "/healthz", "/readyz"]) {
      const res = await hostRequest(f.t.url, host, other, bearer());
      expect(res.status, other).toBe(404);
    }
  });

  it("answers engine paths on the API's origin only to a bearer, in a sandbox, and never to a browser's cookie or ?token=", async () => {
    const api = hostOf(f.t.url);
    const programmatic = await hostRequest(f.t.url, api, `${new URL(a.apiUrl).pathname}/api/health`, bearer());
    expect(programmatic.status).toBe(200);
    expect(programmatic.headers["content-security-policy"]).toBe("sandbox");
    const login = new URL(a.loginUrl).pathname;
    expect((await hostRequest(f.t.url, api, `${login}?token=${f.token}`)).status).toBe(404);
    expect((await hostRequest(f.t.url, api, login, { cookie: `aiem_engine_token=${f.token}` })).status).toBe(404);
    expect((await hostRequest(f.t.url, api, `/engines/${a.uid}/?token=${f.token}`)).status).toBe(404);
    expect(
      (await hostRequest(f.t.url, api, `/engines/${a.uid}/`, { cookie: `aiem_engine_token=${f.token}` })).status,
    ).toBe(404);
    expect((await hostRequest(f.t.url, api, `/sandboxes/${f.sandbox.uid}/ports/8080/`, bearer())).status).toBe(404);
  });

  it("serves a sandbox port at its origin at the program's own paths, creator-only, with a host-only cookie at /", async () => {
    const host = hostOf(f.port.internalUrl);
    expect((await hostRequest(f.t.url, host, "/")).status).toBe(401);
    const bob = await f.t.token("bob");
    // Another member gets the answer of a missing port (docs/adr/0135).
    expect((await hostRequest(f.t.url, host, "/", { authorization: `Bearer ${bob}` })).status).toBe(404);
    const seen = JSON.parse((await hostRequest(f.t.url, host, "/echo?x=1", bearer())).text) as {
      url: string;
      headers: Record<string, string>;
    };
    expect(seen.url).toBe("/echo?x=1");
    expect(seen.headers["x-forwarded-host"]).toBe(host);
    expect(seen.headers["x-forwarded-prefix"]).toBeUndefined();
    expect(seen.headers.authorization).toBeUndefined();
    expect((await hostRequest(f.t.url, host, "/go", bearer())).headers.location).toBe("/landed");
    const exchanged = await hostRequest(f.t.url, host, `/echo?token=${f.token}`);
    expect(exchanged.status).toBe(303);
    expect(exchanged.headers.location).toBe("/echo");
    const cookie = String(exchanged.headers["set-cookie"]);
    expect(cookie).toMatch(/Path=\/;/);
    expect(cookie).not.toMatch(/domain=/i);
    expect((await hostRequest(f.t.url, host, "/", { cookie: cookie.split(";")[0]! })).text).toBe("<p>port page</p>");
  });

  it("carries WebSockets at an engine's origin and at a port's, with the same credentials", async () => {
    const engine = await upgradeRequest(f.t.url, hostOf(a.loginUrl), `/engines/${a.uid}/ws`, bearer());
    expect(engine.status).toBe(101);
    expect(await echo(engine.socket, "to the engine")).toBe("to the engine");
    engine.socket.destroy();
    const port = await upgradeRequest(f.t.url, hostOf(f.port.internalUrl), "/ws", bearer());
    expect(port.status).toBe(101);
    expect(await echo(port.socket, "to the port")).toBe("to the port");
    port.socket.destroy();
    const refused = await upgradeRequest(f.t.url, hostOf(f.port.internalUrl), "/ws");
    expect(refused.status).toBe(401);
    refused.socket.destroy();
    const elsewhere = await upgradeRequest(f.t.url, hostOf(a.loginUrl), `/engines/${b.uid}/ws`, bearer());
    expect(elsewhere.status).toBe(404);
    elsewhere.socket.destroy();
    // On the API's origin, an engine's WebSocket is there for programs with a bearer, as api_url is.
    const programmatic = await upgradeRequest(f.t.url, hostOf(f.t.url), `/engines/${a.uid}/ws`, bearer());
    expect(programmatic.status).toBe(101);
    programmatic.socket.destroy();
    const browser = await upgradeRequest(f.t.url, hostOf(f.t.url), `/engines/${a.uid}/ws`, {
      cookie: `aiem_engine_token=${f.token}`,
    });
    expect(browser.status).toBe(404);
    browser.socket.destroy();
  });

  it("serves a public port at its public origin to anyone", async () => {
    const pub = (await f.rest("PATCH", `/v1/${f.sandbox.name}/ports/8080?updateMask=public`, { public: true })).body
      .port;
    expect(pub.publicUrl).toBe(`http://8080-${f.sandbox.uid}.public.localhost:${new URL(f.t.url).port}/`);
    expect((await hostRequest(f.t.url, hostOf(pub.publicUrl), "/")).text).toBe("<p>port page</p>");
    // A WebSocket through the public origin is cut when the port stops being public.
    const upgraded = await upgradeRequest(f.t.url, hostOf(pub.publicUrl), "/ws");
    expect(upgraded.status).toBe(101);
    expect(await echo(upgraded.socket, "anyone")).toBe("anyone");
    const closed = new Promise<void>((resolve) => upgraded.socket.once("close", () => resolve()));
    expect(
      (await f.rest("PATCH", `/v1/${f.sandbox.name}/ports/8080?updateMask=public`, { public: false })).status,
    ).toBe(200);
    await closed;
    expect((await hostRequest(f.t.url, hostOf(pub.publicUrl), "/")).status).toBe(404);
  });
});

describe("with AIEM_PATH_URLS, the old path URLs on the API's origin", () => {
  let f: ContentFixture;
  beforeAll(async () => {
    f = await startContentFixture({ page: "<p>port page</p>", env: { AIEM_PATH_URLS: "true" } });
  }, 180_000);
  afterAll(async () => f?.stop());

  it("are handed out and served, WebSockets included, and the content origins still serve", async () => {
    const [a] = f.engines;
    expect(a.loginUrl).toBe(`${f.t.url}/${a.name}/oidc/login`);
    expect(f.port.internalUrl).toBe(`${f.t.url}/sandboxes/${f.sandbox.uid}/ports/8080/`);
    const api = hostOf(f.t.url);
    const bearer = { authorization: `Bearer ${f.token}` };
    expect((await hostRequest(f.t.url, api, new URL(a.loginUrl).pathname, bearer)).status).toBe(200);
    expect((await hostRequest(f.t.url, api, `/engines/${a.uid}/`, bearer)).status).toBe(200);
    expect((await hostRequest(f.t.url, api, `/sandboxes/${f.sandbox.uid}/ports/8080/`, bearer)).text).toBe(
      "<p>port page</p>",
    );
    for (const path of [`/engines/${a.uid}/ws`, `/sandboxes/${f.sandbox.uid}/ports/8080/ws`]) {
      const upgraded = await upgradeRequest(f.t.url, api, path, bearer);
      expect(upgraded.status, path).toBe(101);
      expect(await echo(upgraded.socket, path)).toBe(path);
      upgraded.socket.destroy();
    }
    const port = `8080-${f.sandbox.uid}.sandboxes.localhost:${new URL(f.t.url).port}`;
    expect((await hostRequest(f.t.url, port, "/", bearer)).text).toBe("<p>port page</p>");
  });
});

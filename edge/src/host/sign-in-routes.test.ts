// What the official Python client's login functions read from the host, over real HTTP:
// /version, the H2O Cloud discovery records and the embedded token issuer.
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EMBEDDED_AUDIENCE, loadOrCreateSigningKey, mintEmbeddedToken, mintRefreshToken } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { fakeImageCatalogue } from "../testing/fake-catalogue.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";

// A stand-in catalogue part that answers with the caller's principal, to see whom a token is for.
const whoAmI = fakeImageCatalogue({
  getNotebookEngineImage(req, ctx) {
    const who = principalOf(ctx);
    return { notebookEngineImage: { name: req.name, creator: who.name, creatorDisplayName: who.displayName } };
  },
});
const imagePath = "/v1/workspaces/global/notebookEngineImages/jupyter";
const FORM = { "content-type": "application/x-www-form-urlencoded" };

describe("sign-in routes with the embedded identity", () => {
  let t: TestHost;
  let issuer: string;
  beforeAll(async () => {
    t = await startTestHost({ modules: [whoAmI] });
    issuer = `${t.url}/oidc`;
  });
  afterAll(() => t.stop());

  const refreshToken = async (o: { clientId?: string; ttlSeconds?: number; now?: Date } = {}) =>
    mintRefreshToken(await loadOrCreateSigningKey(t.dataDir), { user: "alice", displayName: "Alice", issuer, ...o });
  const exchange = (fields: Record<string, string>, headers: Record<string, string> = FORM) =>
    fetch(`${issuer}/token`, { method: "POST", headers, body: new URLSearchParams(fields).toString() });

  it("names the issuer after the public URL", () => {
    expect(t.host.publicUrl).toBe(t.url);
    expect(t.host.issuerUrl).toBe(issuer);
  });

  it("answers GET /version without a token", async () => {
    const res = await fetch(`${t.url}/version`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect((await fetch(`${t.url}/version`, { method: "POST", body: "{}" })).status).toBe(405);
  });

  it("serves the discovery document, whose JWKS verifies the access tokens", async () => {
    const res = await fetch(`${issuer}/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer,
      token_endpoint: `${issuer}/token`,
      jwks_uri: `${issuer}/jwks`,
      grant_types_supported: ["refresh_token"],
    });
    const token = await mintEmbeddedToken(await loadOrCreateSigningKey(t.dataDir), { user: "alice", issuer });
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(doc.jwks_uri as string)), {
      issuer,
      audience: EMBEDDED_AUDIENCE,
    });
    expect(payload.sub).toBe("alice");
  });

  it("exchanges a refresh token for an access token that the API accepts as the same user", async () => {
    const res = await exchange({
      grant_type: "refresh_token",
      refresh_token: await refreshToken({ clientId: "platform" }),
      client_id: "platform",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as { access_token: string; token_type: string; expires_in: number };
    expect(body).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    const call = await fetch(`${t.url}${imagePath}`, { headers: { authorization: `Bearer ${body.access_token}` } });
    expect(call.status).toBe(200);
    expect(await call.json()).toMatchObject({
      notebookEngineImage: { creator: "users/alice", creatorDisplayName: "Alice" },
    });
  });

  it("refuses a refresh token as a bearer token", async () => {
    const call = await fetch(`${t.url}${imagePath}`, { headers: { authorization: `Bearer ${await refreshToken()}` } });
    expect(call.status).toBe(401);
    expect(await call.json()).toMatchObject({ code: 16, message: expect.stringMatching(/not an access token/) });
  });

  it.each([
    ["an access token used as a refresh token", "access", 400, "invalid_grant"],
    ["an expired refresh token", "expired", 400, "invalid_grant"],
    ["a forged refresh token", "forged", 400, "invalid_grant"],
    ["another grant type", "password", 400, "unsupported_grant_type"],
    ["a token bound to another client", "bound", 400, "invalid_grant"],
  ])("answers %s with an OAuth error", async (_what, kind, status, error) => {
    const key = await loadOrCreateSigningKey(t.dataDir);
    const fields: Record<string, string> = { grant_type: "refresh_token", client_id: "platform" };
    if (kind === "access") fields.refresh_token = await mintEmbeddedToken(key, { user: "alice", issuer });
    if (kind === "expired")
      fields.refresh_token = await refreshToken({ ttlSeconds: 60, now: new Date(Date.now() - 3600_000) });
    if (kind === "forged") {
      const [h, p] = (await refreshToken()).split(".");
      fields.refresh_token = `${h}.${p}.${Buffer.alloc(64).toString("base64url")}`;
    }
    if (kind === "password") Object.assign(fields, { grant_type: "password", username: "alice", password: "pw" });
    if (kind === "bound") fields.refresh_token = await refreshToken({ clientId: "someone-else" });
    const res = await exchange(fields);
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.json()).toEqual({ error, error_description: expect.any(String) });
  });

  it("takes the token request only as a POSTed form of sane size", async () => {
    const get = await fetch(`${issuer}/token`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    const json = await exchange(
      { grant_type: "refresh_token", refresh_token: "x" },
      { "content-type": "application/json" },
    );
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: "invalid_request" });
    const huge = await exchange({ grant_type: "refresh_token", refresh_token: "x".repeat(100_000) });
    expect(huge.status).toBe(413);
  });

  it("serves the H2O Cloud discovery records without a token", async () => {
    const get = async (what: string) => {
      const res = await fetch(`${t.url}/.ai.h2o.cloud.discovery/v1/${what}`);
      expect(res.status).toBe(200);
      return res.json();
    };
    expect(await get("environment")).toEqual({
      environment: {
        h2oCloudEnvironment: t.url,
        issuerUrl: issuer,
        h2oCloudPlatformOauth2Scope: "openid offline_access",
      },
    });
    expect(await get("services")).toEqual({
      services: [
        { name: "services/engine-manager", displayName: "AI Engine Manager", uri: t.url, version: expect.any(String) },
      ],
    });
    expect(await get("clients")).toEqual({
      clients: [{ name: "clients/platform", displayName: "Platform", oauth2ClientId: "platform" }],
    });
    expect(await get("links")).toEqual({ links: [] });
    expect(await get("components")).toEqual({ components: [] });
    expect((await fetch(`${t.url}/.ai.h2o.cloud.discovery/v1/constructor`)).status).toBe(404);
    expect((await fetch(`${t.url}/.ai.h2o.cloud.discovery/v1/services`, { method: "POST", body: "{}" })).status).toBe(
      405,
    );
  });
});

describe("sign-in routes behind a public URL", () => {
  let t: TestHost;
  const publicUrl = "https://aiem.example.com/base";
  beforeAll(async () => {
    t = await startTestHost({ modules: [whoAmI], env: { AIEM_PUBLIC_URL: `${publicUrl}/` } });
  });
  afterAll(() => t.stop());

  it("names the issuer, the environment and the API after it, and accepts its tokens", async () => {
    const doc = (await (await fetch(`${t.url}/oidc/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(doc).toMatchObject({ issuer: `${publicUrl}/oidc`, token_endpoint: `${publicUrl}/oidc/token` });
    const env = (await (await fetch(`${t.url}/.ai.h2o.cloud.discovery/v1/environment`)).json()) as {
      environment: Record<string, unknown>;
    };
    expect(env.environment).toMatchObject({ h2oCloudEnvironment: publicUrl, issuerUrl: `${publicUrl}/oidc` });
    const key = await loadOrCreateSigningKey(t.dataDir);
    const res = await fetch(`${t.url}/oidc/token`, {
      method: "POST",
      headers: FORM,
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: await mintRefreshToken(key, { user: "bob", issuer: `${publicUrl}/oidc` }),
      }),
    });
    expect(res.status).toBe(200);
    const { access_token } = (await res.json()) as { access_token: string };
    const call = await fetch(`${t.url}${imagePath}`, { headers: { authorization: `Bearer ${access_token}` } });
    expect(await call.json()).toMatchObject({ notebookEngineImage: { creator: "users/bob" } });
    // A token named after the listener instead of the public URL belongs to another issuer.
    const stray = await mintEmbeddedToken(key, { user: "bob", issuer: `${t.url}/oidc` });
    expect((await fetch(`${t.url}${imagePath}`, { headers: { authorization: `Bearer ${stray}` } })).status).toBe(401);
  });
});

describe("sign-in routes with an outside OIDC issuer", () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost({ modules: [whoAmI], env: { AIEM_OIDC_ISSUER: "https://login.example.com/realms/aiem" } });
  });
  afterAll(() => t.stop());

  it("serves no issuer of its own and points discovery at the outside one", async () => {
    expect(t.host.issuerUrl).toBeUndefined();
    expect((await fetch(`${t.url}/oidc/.well-known/openid-configuration`)).status).toBe(404);
    expect(
      (await fetch(`${t.url}/oidc/token`, { method: "POST", headers: FORM, body: "grant_type=refresh_token" })).status,
    ).toBe(404);
    const env = (await (await fetch(`${t.url}/.ai.h2o.cloud.discovery/v1/environment`)).json()) as {
      environment: Record<string, unknown>;
    };
    expect(env.environment.issuerUrl).toBe("https://login.example.com/realms/aiem");
    expect(await (await fetch(`${t.url}/.ai.h2o.cloud.discovery/v1/clients`)).json()).toEqual({ clients: [] });
    expect((await fetch(`${t.url}/version`)).status).toBe(200);
  });
});

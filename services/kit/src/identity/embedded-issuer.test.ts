import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { useTempDirs } from "../testing/temp-dirs.js";
import { createAuthenticator } from "./authenticator.js";
import { createEmbeddedIssuer, type EmbeddedIssuer, type TokenEndpointResponse } from "./embedded-issuer.js";
import { EMBEDDED_AUDIENCE, embeddedIssuerUrl, mintEmbeddedToken } from "./embedded-token.js";
import { mintRefreshToken, REFRESH_TOKEN_TYPE, verifyRefreshToken } from "./refresh-token.js";
import { loadOrCreateSigningKey, type SigningKey } from "./signing-key.js";

const ISSUER = embeddedIssuerUrl("http://127.0.0.1:8080/");
const FORM = "application/x-www-form-urlencoded";

const tempDir = useTempDirs("aiem-issuer-");

describe("embedded issuer", () => {
  let dataDir: string;
  let key: SigningKey;
  let issuer: EmbeddedIssuer;

  beforeAll(async () => {
    dataDir = await tempDir();
    key = await loadOrCreateSigningKey(dataDir);
    issuer = createEmbeddedIssuer({ dataDir, issuer: () => ISSUER });
  });

  const exchange = (fields: Record<string, string>, o: { contentType?: string; authorization?: string } = {}) =>
    issuer.token({
      contentType: o.contentType ?? FORM,
      body: new URLSearchParams(fields).toString(),
      authorization: o.authorization,
    });
  const refresh = (o: Partial<Parameters<typeof mintRefreshToken>[1]> = {}) =>
    mintRefreshToken(key, { user: "alice", issuer: ISSUER, ...o });
  const expectError = (answer: TokenEndpointResponse, status: number, error: string, description?: RegExp) => {
    expect(answer.status).toBe(status);
    expect(answer.body.error).toBe(error);
    if (description) expect(answer.body.error_description).toMatch(description);
    expect(answer.headers["cache-control"]).toBe("no-store");
  };
  /** Exchanges a refresh token that the issuer must refuse as an invalid grant, for `reason`. */
  const expectGrantRefused = async (refreshToken: string, reason: RegExp) =>
    expectError(
      await exchange({ grant_type: "refresh_token", refresh_token: refreshToken }),
      400,
      "invalid_grant",
      reason,
    );

  it("lives under the public URL", () => {
    expect(ISSUER).toBe("http://127.0.0.1:8080/oidc");
  });

  it("publishes a discovery document naming its endpoints", () => {
    expect(issuer.metadata()).toMatchObject({
      issuer: ISSUER,
      token_endpoint: `${ISSUER}/token`,
      jwks_uri: `${ISSUER}/jwks`,
      grant_types_supported: ["refresh_token"],
      token_endpoint_auth_methods_supported: ["none"],
    });
  });

  it("publishes only the public half of the signing key, and it verifies the tokens", async () => {
    const jwks = await issuer.jwks();
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "EC", crv: "P-256", kid: key.kid, alg: "ES256", use: "sig" });
    expect(jwks.keys[0]).not.toHaveProperty("d");
    const token = await mintEmbeddedToken(key, { user: "alice", issuer: ISSUER });
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), {
      issuer: ISSUER,
      audience: EMBEDDED_AUDIENCE,
    });
    expect(payload.sub).toBe("alice");
  });

  it("exchanges a refresh token for an access token the authenticator accepts as the same user", async () => {
    const answer = await exchange({
      grant_type: "refresh_token",
      refresh_token: await refresh({ displayName: "Alice A.", roles: ["ds"], admin: true }),
      client_id: "platform",
    });
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({ "cache-control": "no-store", pragma: "no-cache" });
    expect(answer.body).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
    expect(answer.body).not.toHaveProperty("refresh_token");
    const accessToken = answer.body.access_token as string;
    const { payload } = await jwtVerify(accessToken, createLocalJWKSet(await issuer.jwks()), {
      issuer: ISSUER,
      audience: EMBEDDED_AUDIENCE,
    });
    expect(payload).toMatchObject({ client_id: "platform" });
    const auth = createAuthenticator({ dataDir, embeddedIssuer: () => ISSUER });
    expect(await auth.authenticate(`Bearer ${accessToken}`)).toEqual({
      name: "users/alice",
      subject: "alice",
      displayName: "Alice A.",
      roles: ["ds"],
      admin: true,
    });
  });

  it("does not let an access token outlive its refresh token", async () => {
    const answer = await exchange({ grant_type: "refresh_token", refresh_token: await refresh({ ttlSeconds: 120 }) });
    expect(answer.status).toBe(200);
    expect(answer.body.expires_in).toBeGreaterThan(100);
    expect(answer.body.expires_in).toBeLessThanOrEqual(120);
  });

  it("honours a client binding", async () => {
    const bound = await refresh({ clientId: "platform" });
    expect((await exchange({ grant_type: "refresh_token", refresh_token: bound, client_id: "platform" })).status).toBe(
      200,
    );
    const basic = `Basic ${Buffer.from("platform:").toString("base64")}`;
    expect(
      (await exchange({ grant_type: "refresh_token", refresh_token: bound }, { authorization: basic })).status,
    ).toBe(200);
    expectError(
      await exchange({ grant_type: "refresh_token", refresh_token: bound, client_id: "other" }),
      400,
      "invalid_grant",
      /issued to client "platform", not "other"/,
    );
    await expectGrantRefused(bound, /send client_id/);
  });

  it.each([
    [{ grant_type: "password", username: "a", password: "b" }, 400, "unsupported_grant_type"],
    [{ grant_type: "client_credentials" }, 400, "unsupported_grant_type"],
    [{ refresh_token: "x" }, 400, "invalid_request"],
    [{ grant_type: "refresh_token" }, 400, "invalid_request"],
    [{ grant_type: "refresh_token", refresh_token: "x", client_secret: "s3cret" }, 401, "invalid_client"],
    [{ grant_type: "refresh_token", refresh_token: "x", client_id: "has space" }, 401, "invalid_client"],
  ])("answers %j with %d %s", async (fields, status, error) => {
    expectError(await exchange(fields), status, error);
  });

  it("refuses repeated parameters, other content types and client secrets in Basic credentials", async () => {
    const token = await refresh();
    const repeated = await issuer.token({
      contentType: FORM,
      body: `grant_type=refresh_token&refresh_token=${token}&refresh_token=${token}`,
      authorization: undefined,
    });
    expectError(repeated, 400, "invalid_request", /repeated/);
    expectError(
      await exchange({ grant_type: "refresh_token", refresh_token: token }, { contentType: "application/json" }),
      400,
      "invalid_request",
    );
    const withSecret = await exchange(
      { grant_type: "refresh_token", refresh_token: token },
      { authorization: `Basic ${Buffer.from("platform:pw").toString("base64")}` },
    );
    expectError(withSecret, 401, "invalid_client");
    expect(withSecret.headers["www-authenticate"]).toMatch(/^Basic/);
  });

  it("rejects an access token used as a refresh token", async () => {
    const access = await mintEmbeddedToken(key, { user: "alice", issuer: ISSUER });
    await expectGrantRefused(access, /not a refresh token/);
  });

  it("rejects an expired refresh token", async () => {
    const old = await refresh({ ttlSeconds: 60, now: new Date(Date.now() - 3600_000) });
    await expectGrantRefused(old, /expired/);
  });

  it("rejects a refresh token issued in the future or for longer than a year", async () => {
    const future = await refresh({ now: new Date(Date.now() + 120_000) });
    await expectGrantRefused(future, /issued in the future/);
    await expect(refresh({ ttlSeconds: 366 * 86400 })).rejects.toThrow(/at most 31536000s/);
    const century = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", typ: REFRESH_TOKEN_TYPE })
      .setIssuer(ISSUER)
      .setAudience(ISSUER)
      .setSubject("alice")
      .setIssuedAt()
      .setExpirationTime("100y")
      .sign(key.privateKey);
    await expectGrantRefused(century, /lifetime is too long/);
  });

  it("issues access tokens no longer than it is told", async () => {
    const short = createEmbeddedIssuer({ dataDir, issuer: () => ISSUER, accessTokenTtlSeconds: 300 });
    const answer = await short.token({
      contentType: FORM,
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: await refresh() }).toString(),
      authorization: undefined,
    });
    expect(answer.body.expires_in).toBe(300);
    const auth = createAuthenticator({ dataDir, embeddedIssuer: ISSUER, maxTokenLifetimeSeconds: 300 });
    expect((await auth.authenticate(`Bearer ${answer.body.access_token as string}`)).name).toBe("users/alice");
  });

  it("rejects a forged refresh token", async () => {
    const otherKey = await loadOrCreateSigningKey(await tempDir());
    const forged = await mintRefreshToken(otherKey, { user: "root", admin: true, issuer: ISSUER });
    await expectGrantRefused(forged, /^refresh token is invalid$/);
    const [h, , s] = (await refresh()).split(".");
    const edited = `${h}.${Buffer.from(JSON.stringify({ sub: "root", iss: ISSUER, aud: ISSUER, exp: 4e9, iat: 1, aiem_admin: true })).toString("base64url")}.${s}`;
    await expectGrantRefused(edited, /invalid/);
    await expectGrantRefused("not-a-jwt", /invalid/);
  });

  it("rejects a refresh token of another issuer URL, naming both", async () => {
    const elsewhere = await refresh({ issuer: embeddedIssuerUrl("http://127.0.0.1:9999") });
    await expectGrantRefused(elsewhere, /127\.0\.0\.1:9999\/oidc.*127\.0\.0\.1:8080\/oidc/);
  });

  it("rejects a symmetric token shaped like a refresh token", async () => {
    const hs = await new SignJWT({ sub: "root", aiem_admin: true })
      .setProtectedHeader({ alg: "HS256", typ: REFRESH_TOKEN_TYPE })
      .setIssuer(ISSUER)
      .setAudience(ISSUER)
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("a-secret-anyone-could-pick-0123456789"));
    await expectGrantRefused(hs, /invalid/);
  });
});

describe("refresh tokens", () => {
  let dataDir: string;
  let key: SigningKey;
  beforeAll(async () => {
    dataDir = await tempDir();
    key = await loadOrCreateSigningKey(dataDir);
  });

  it("are typed, long-lived and carry the identity", async () => {
    const token = await mintRefreshToken(key, {
      user: "users/bob",
      issuer: ISSUER,
      roles: ["r"],
      clientId: "platform",
    });
    expect(decodeProtectedHeader(token)).toMatchObject({ typ: REFRESH_TOKEN_TYPE, alg: "ES256", kid: key.kid });
    const grant = await verifyRefreshToken(key, token, { issuer: ISSUER });
    expect(grant).toMatchObject({ user: "bob", displayName: "bob", admin: false, roles: ["r"], clientId: "platform" });
    expect(grant.expiresAt - Date.now() / 1000).toBeGreaterThan(29 * 86400);
  });

  it("are not access tokens", async () => {
    const auth = createAuthenticator({ dataDir, embeddedIssuer: ISSUER });
    const token = await mintRefreshToken(key, { user: "alice", issuer: ISSUER });
    await expect(auth.authenticate(`Bearer ${token}`)).rejects.toThrow(/refresh token is not an access token/);
  });

  it("refuse odd client ids", async () => {
    await expect(mintRefreshToken(key, { user: "alice", issuer: ISSUER, clientId: "a b" })).rejects.toThrow(
      /invalid client id/,
    );
  });
});

describe("the authenticator in embedded mode", () => {
  it("accepts the issuer URL and the historical issuer, and names a wrong one", async () => {
    const dataDir = await tempDir();
    const key = await loadOrCreateSigningKey(dataDir);
    const auth = createAuthenticator({ dataDir, embeddedIssuer: () => ISSUER });
    expect(
      (await auth.authenticate(`Bearer ${await mintEmbeddedToken(key, { user: "alice", issuer: ISSUER })}`)).name,
    ).toBe("users/alice");
    expect((await auth.authenticate(`Bearer ${await mintEmbeddedToken(key, { user: "alice" })}`)).name).toBe(
      "users/alice",
    );
    const elsewhere = await mintEmbeddedToken(key, {
      user: "alice",
      issuer: embeddedIssuerUrl("http://127.0.0.1:9999"),
    });
    await expect(auth.authenticate(`Bearer ${elsewhere}`)).rejects.toThrow(
      /claim iss is invalid: .*9999\/oidc.*AIEM_PUBLIC_URL/,
    );
  });
});

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTempDirs } from "../testing/temp-dirs.js";
import { createAuthenticator, readRoles, type Authenticator } from "./authenticator.js";
import { lowSToken } from "./ecdsa-low-s.js";
import { EMBEDDED_AUDIENCE, EMBEDDED_ISSUER, mintEmbeddedToken } from "./embedded-token.js";
import { loadOrCreateSigningKey, type SigningKey } from "./signing-key.js";

async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ConnectError) return err;
    throw err;
  }
  throw new Error("expected the call to fail");
}

/** The P-256 group order. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

/** The same ES256 token with the other valid signature, (r, n - s). */
function highSTwin(token: string): string {
  const [header, payload, signature] = token.split(".") as [string, string, string];
  const bytes = Buffer.from(signature, "base64url");
  const s = BigInt(`0x${bytes.subarray(32).toString("hex")}`);
  const flipped = Buffer.from((P256_ORDER - s).toString(16).padStart(64, "0"), "hex");
  return `${header}.${payload}.${Buffer.concat([bytes.subarray(0, 32), flipped]).toString("base64url")}`;
}

const tempDir = useTempDirs("aiem-identity-");

describe("embedded mode", () => {
  let dataDir: string;
  let key: SigningKey;
  let auth: Authenticator;
  const bearer = async (options: Parameters<typeof mintEmbeddedToken>[1]) =>
    `Bearer ${await mintEmbeddedToken(key, options)}`;

  beforeAll(async () => {
    dataDir = await tempDir();
    key = await loadOrCreateSigningKey(dataDir);
    auth = createAuthenticator({ dataDir, admins: ["users/root"] });
  });

  it("accepts a good token", async () => {
    const principal = await auth.authenticate(
      await bearer({ user: "alice", displayName: "Alice A.", roles: ["ds", "ops"] }),
    );
    expect(principal).toEqual({
      name: "users/alice",
      subject: "alice",
      displayName: "Alice A.",
      roles: ["ds", "ops"],
      admin: false,
    });
  });

  it("makes --admin tokens and the policy's admins administrators", async () => {
    expect((await auth.authenticate(await bearer({ user: "boss", admin: true }))).admin).toBe(true);
    expect((await auth.authenticate(await bearer({ user: "users/root" }))).admin).toBe(true);
    expect((await auth.authenticate(await bearer({ user: "bob" }))).displayName).toBe("bob");
  });

  it("accepts any case of the Bearer scheme", async () => {
    const token = await mintEmbeddedToken(key, { user: "alice" });
    expect((await auth.authenticate(`bearer ${token}`)).name).toBe("users/alice");
  });

  it.each([
    [undefined, /missing bearer token/],
    ["", /missing bearer token/],
    ["Basic YWxpY2U6cHc=", /not a bearer token/],
    ["Bearer", /not a bearer token/],
    ["Bearer a b", /not a bearer token/],
    ["Bearer not-a-jwt", /malformed token/],
    ["Bearer a.b.c", /malformed token/],
    ["Bearer eyJhbGciOiJFUzI1NiJ9.e30.AAAA", /malformed token|signature/],
  ])("rejects %j as UNAUTHENTICATED", async (header, message) => {
    const err = await failure(auth.authenticate(header));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toMatch(message);
  });

  it("rejects an expired token", async () => {
    const old = new Date(Date.now() - 2 * 3600_000);
    const err = await failure(auth.authenticate(await bearer({ user: "alice", ttlSeconds: 60, now: old })));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toBe("token expired");
  });

  it("rejects a token issued in the future beyond the clock skew, and accepts one within it", async () => {
    const later = new Date(Date.now() + 120_000);
    const err = await failure(auth.authenticate(await bearer({ user: "alice", now: later, ttlSeconds: 3600 })));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toMatch(/iat is invalid: the token was issued in the future/);
    const slightly = new Date(Date.now() + 10_000);
    expect((await auth.authenticate(await bearer({ user: "alice", now: slightly, ttlSeconds: 3600 }))).name).toBe(
      "users/alice",
    );
  });

  it("rejects a lifetime beyond the maximum, counted from iat or else from now", async () => {
    const err = await failure(auth.authenticate(await bearer({ user: "alice", ttlSeconds: 100 * 365 * 86400 })));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toMatch(
      /token lifetime is too long: 3153600000s .* at most 86400s \(AIEM_TOKEN_MAX_LIFETIME\)/,
    );
    // The default `npm run token` lifetime is exactly the default maximum.
    expect((await auth.authenticate(await bearer({ user: "alice", ttlSeconds: 86400 }))).name).toBe("users/alice");
    const tight = createAuthenticator({ dataDir, maxTokenLifetimeSeconds: 600 });
    expect((await failure(tight.authenticate(await bearer({ user: "alice", ttlSeconds: 601 })))).rawMessage).toMatch(
      /at most 600s/,
    );
    expect((await tight.authenticate(await bearer({ user: "alice", ttlSeconds: 600 }))).name).toBe("users/alice");
    const withoutIat = await new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(EMBEDDED_ISSUER)
      .setAudience(EMBEDDED_AUDIENCE)
      .setExpirationTime("2h")
      .sign(key.privateKey);
    expect((await failure(tight.authenticate(`Bearer ${withoutIat}`))).rawMessage).toMatch(/lifetime is too long/);
  });

  it("gives a high-s signature the identity of its low-s twin", async () => {
    const strict = createAuthenticator({ dataDir });
    // Minted tokens are low-s; flipping s gives the other valid signature of the same token.
    const token = await mintEmbeddedToken(key, { user: "alice" });
    expect(lowSToken(token)).toBe(token);
    const twin = highSTwin(token);
    expect(twin).not.toBe(token);
    expect(lowSToken(twin)).toBe(token);
    const first = await strict.authenticate(`Bearer ${twin}`);
    // Remembered under the low-s spelling: the original token is answered from memory.
    expect(await strict.authenticate(`Bearer ${token}`)).toBe(first);
  });

  it("accepts a token it verified before only until the token expires", async () => {
    const strict = createAuthenticator({ dataDir, clockToleranceSeconds: 0 });
    const token = await mintEmbeddedToken(key, { user: "alice", ttlSeconds: 60, now: new Date(Date.now() - 59_000) });
    const exp = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()).exp as number;
    const first = await strict.authenticate(`Bearer ${token}`);
    // The second answer comes from memory: the same principal.
    expect(await strict.authenticate(`Bearer ${token}`)).toBe(first);
    await new Promise((r) => setTimeout(r, Math.max(0, exp * 1000 - Date.now()) + 50));
    const err = await failure(strict.authenticate(`Bearer ${token}`));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toBe("token expired");
  });

  it("rejects a token signed by another key (forged)", async () => {
    const otherKey = await loadOrCreateSigningKey(await tempDir());
    const err = await failure(
      auth.authenticate(`Bearer ${await mintEmbeddedToken(otherKey, { user: "alice", admin: true })}`),
    );
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toBe("token signature is invalid");
  });

  it("rejects a token whose payload was edited", async () => {
    const [h, , s] = (await mintEmbeddedToken(key, { user: "alice" })).split(".");
    const payload = Buffer.from(
      JSON.stringify({ sub: "root", iss: EMBEDDED_ISSUER, aud: EMBEDDED_AUDIENCE, exp: 4e9, aiem_admin: true }),
    ).toString("base64url");
    const err = await failure(auth.authenticate(`Bearer ${h}.${payload}.${s}`));
    expect(err.code).toBe(Code.Unauthenticated);
  });

  const claims = { sub: "alice", iss: EMBEDDED_ISSUER, aud: EMBEDDED_AUDIENCE, aiem_admin: true };

  it("rejects a symmetric (HS256) token", async () => {
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("a-secret-anyone-could-pick-0123456789"));
    const err = await failure(auth.authenticate(`Bearer ${token}`));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toBe("token algorithm is not accepted");
  });

  it("rejects an unsigned (alg none) token", async () => {
    const token = new UnsecuredJWT(claims).setExpirationTime("1h").encode();
    const err = await failure(auth.authenticate(`Bearer ${token}`));
    expect(err.code).toBe(Code.Unauthenticated);
  });

  it("rejects a token for another issuer or without an expiry", async () => {
    const wrongIssuer = await new SignJWT({ ...claims, iss: "someone-else" })
      .setProtectedHeader({ alg: "ES256" })
      .setExpirationTime("1h")
      .sign(key.privateKey);
    expect((await failure(auth.authenticate(`Bearer ${wrongIssuer}`))).rawMessage).toMatch(/claim iss is invalid/);
    const noExpiry = await new SignJWT(claims).setProtectedHeader({ alg: "ES256" }).sign(key.privateKey);
    expect((await failure(auth.authenticate(`Bearer ${noExpiry}`))).code).toBe(Code.Unauthenticated);
  });

  it("rejects a subject that cannot be a user name", async () => {
    const slash = await new SignJWT({ ...claims, sub: "a/b" })
      .setProtectedHeader({ alg: "ES256" })
      .setExpirationTime("1h")
      .sign(key.privateKey);
    expect((await failure(auth.authenticate(`Bearer ${slash}`))).rawMessage).toMatch(/subject/);
  });

  it("refuses to mint tokens for odd user names", async () => {
    await expect(mintEmbeddedToken(key, { user: "" })).rejects.toThrow(/invalid user/);
    await expect(mintEmbeddedToken(key, { user: "a b" })).rejects.toThrow(/invalid user/);
  });
});

describe("OIDC mode", () => {
  let server: Server;
  let issuer: string;
  let signingKey: CryptoKey;
  let jwksHits = 0;
  const kid = "test-key-1";

  beforeAll(async () => {
    const pair = await generateKeyPair("RS256", { extractable: true });
    signingKey = pair.privateKey;
    const publicJwk = { ...(await exportJWK(pair.publicKey)), kid, alg: "RS256", use: "sig" };
    server = createServer((req, res) => {
      res.setHeader("content-type", "application/json");
      if (req.url === "/realms/test/.well-known/openid-configuration") {
        res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/keys` }));
      } else if (req.url === "/realms/test/keys") {
        jwksHits++;
        res.end(JSON.stringify({ keys: [publicJwk] }));
      } else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/test`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  const sign = (payload: JWTPayload, key = signingKey, keyId = kid) =>
    new SignJWT(payload)
      .setProtectedHeader({ alg: "RS256", kid: keyId })
      .setIssuer(issuer)
      .setAudience("aiem")
      .setSubject("0f8e-alice")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(key);

  const oidc = () =>
    createAuthenticator({
      dataDir: "/nonexistent",
      oidcIssuer: issuer,
      oidcAudience: "aiem",
      rolesClaim: "realm_access.roles",
    });

  it("verifies tokens against the issuer's JWKS, with nested roles", async () => {
    const auth = oidc();
    const token = await sign({ name: "Alice", realm_access: { roles: ["data-science", 7] }, aiem_admin: true });
    const principal = await auth.authenticate(`Bearer ${token}`);
    expect(principal).toEqual({
      name: "users/0f8e-alice",
      subject: "0f8e-alice",
      displayName: "Alice",
      roles: ["data-science"],
      // The embedded admin claim means nothing in an issuer's token.
      admin: false,
    });
    expect(jwksHits).toBeGreaterThan(0);
  });

  it("falls back to preferred_username for the display name", async () => {
    const principal = await oidc().authenticate(`Bearer ${await sign({ preferred_username: "alice" })}`);
    expect(principal.displayName).toBe("alice");
    expect(principal.roles).toEqual([]);
  });

  it("rejects a wrong audience", async () => {
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid })
      .setIssuer(issuer)
      .setAudience("other")
      .setSubject("a")
      .setExpirationTime("5m")
      .sign(signingKey);
    const err = await failure(oidc().authenticate(`Bearer ${token}`));
    expect(err.code).toBe(Code.Unauthenticated);
    expect(err.rawMessage).toMatch(/claim aud/);
  });

  it("rejects a token signed by a key the issuer does not publish", async () => {
    const other = await generateKeyPair("RS256");
    const err = await failure(oidc().authenticate(`Bearer ${await sign({}, other.privateKey, "unknown-kid")}`));
    expect(err.code).toBe(Code.Unauthenticated);
  });

  it("rejects an embedded token", async () => {
    const key = await loadOrCreateSigningKey(await tempDir());
    const err = await failure(oidc().authenticate(`Bearer ${await mintEmbeddedToken(key, { user: "alice" })}`));
    expect(err.code).toBe(Code.Unauthenticated);
  });

  it("is UNAVAILABLE when the issuer cannot be reached", async () => {
    const auth = createAuthenticator({ dataDir: "/nonexistent", oidcIssuer: "http://127.0.0.1:1/realms/none" });
    const err = await failure(auth.authenticate(`Bearer ${await sign({})}`));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.rawMessage).toMatch(/discovery/);
  });
});

describe("readRoles", () => {
  it.each([
    [{ roles: ["a", "b"] }, "roles", ["a", "b"]],
    [{ roles: "a" }, "roles", ["a"]],
    [{ roles: 3 }, "roles", []],
    [{}, "roles", []],
    [{ realm_access: { roles: ["x"] } }, "realm_access.roles", ["x"]],
    [{ realm_access: ["x"] }, "realm_access.roles", []],
    [{ "https://example.com/roles": ["ns"] }, "https://example.com/roles", ["ns"]],
    [{ a: { b: { c: ["deep"] } } }, "a.b.c", ["deep"]],
  ])("reads %j at %s", (payload, claim, roles) => {
    expect(readRoles(payload as JWTPayload, claim)).toEqual(roles);
  });
});

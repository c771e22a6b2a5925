import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { decodeJwt, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuthenticator } from "./authenticator.js";
import { createEmbeddedIssuer } from "./embedded-issuer.js";
import { REFRESH_TOKEN_TYPE } from "./refresh-token.js";
import { runTokenCli } from "./token-cli.js";

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const bin = path.join(root, "services/kit/bin/token.mjs");
const JWT_LINE = /^[\w-]+\.[\w-]+\.[\w-]+\n$/;
/** The issuer of a server on the default AIEM_HOST and AIEM_PORT. */
const ISSUER = "http://127.0.0.1:8080/oidc";

async function cli(args: string[], env: Record<string, string>) {
  let stdout = "";
  let stderr = "";
  const code = await runTokenCli(
    args,
    env,
    (t) => (stdout += t),
    (t) => (stderr += t),
  );
  return { code, stdout, stderr };
}

describe("token command", () => {
  let dataDir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "aiem-token-"));
    env = { AIEM_DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it("prints only the token, valid for a server on the same data directory", async () => {
    const { code, stdout, stderr } = await cli(
      ["--user", "alice", "--admin", "--role", "ds", "--role", "ops", "--name", "Alice A.", "--ttl", "2h"],
      env,
    );
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(JWT_LINE);
    expect(decodeJwt(stdout.trim()).iss).toBe(ISSUER);
    const principal = await createAuthenticator({ dataDir, embeddedIssuer: ISSUER }).authenticate(
      `Bearer ${stdout.trim()}`,
    );
    expect(principal).toEqual({
      name: "users/alice",
      subject: "alice",
      displayName: "Alice A.",
      roles: ["ds", "ops"],
      admin: true,
    });
  });

  it("names the issuer after AIEM_PUBLIC_URL, else AIEM_HOST and AIEM_PORT", async () => {
    const iss = async (extra: Record<string, string>) =>
      decodeJwt((await cli(["--user", "a"], { ...env, ...extra })).stdout.trim()).iss;
    expect(await iss({ AIEM_PUBLIC_URL: "https://aiem.example.com/" })).toBe("https://aiem.example.com/oidc");
    expect(await iss({ AIEM_HOST: "0.0.0.0", AIEM_PORT: "9000" })).toBe("http://127.0.0.1:9000/oidc");
  });

  it("prints a refresh token that the issuer exchanges for the same identity", async () => {
    const { code, stdout, stderr } = await cli(
      ["--user", "alice", "--refresh", "--client", "platform", "--role", "ds", "--admin"],
      env,
    );
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(JWT_LINE);
    const refreshToken = stdout.trim();
    expect(decodeProtectedHeader(refreshToken).typ).toBe(REFRESH_TOKEN_TYPE);
    expect(decodeJwt(refreshToken)).toMatchObject({ iss: ISSUER, aud: ISSUER, sub: "alice", client_id: "platform" });
    const auth = createAuthenticator({ dataDir, embeddedIssuer: ISSUER });
    await expect(auth.authenticate(`Bearer ${refreshToken}`)).rejects.toThrow(/not an access token/);
    const answer = await createEmbeddedIssuer({ dataDir, issuer: () => ISSUER }).token({
      contentType: "application/x-www-form-urlencoded",
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: refreshToken,
        client_id: "platform",
      }).toString(),
      authorization: undefined,
    });
    expect(answer.status).toBe(200);
    const principal = await auth.authenticate(`Bearer ${answer.body.access_token as string}`);
    expect(principal).toMatchObject({ name: "users/alice", roles: ["ds"], admin: true });
  });

  it("gives refresh tokens 30 days unless --ttl says otherwise", async () => {
    const lifetime = async (args: string[]) => {
      const claims = decodeJwt((await cli(["--user", "a", "--refresh", ...args], env)).stdout.trim());
      return claims.exp! - claims.iat!;
    };
    expect(await lifetime([])).toBe(30 * 86400);
    expect(await lifetime(["--ttl", "90d"])).toBe(90 * 86400);
  });

  it.each([
    [[], 2, /--user is required/],
    [["--user"], 2, /argument missing/],
    [["--user", "a", "--what"], 2, /Unknown option '--what'/],
    [["--user", "a", "--ttl", "soon"], 1, /invalid --ttl/],
    [["--user", "a/b"], 1, /invalid user/],
    [["--user", "a", "--client", "platform"], 2, /--client binds a refresh token/],
    [["--user", "a", "--refresh", "--client", "a b"], 1, /invalid client id/],
    [["--user", "a", "--ttl", "25h"], 1, /at most 86400s \(AIEM_TOKEN_MAX_LIFETIME\)/],
    [["--user", "a", "--refresh", "--ttl", "400d"], 1, /refresh token lasts at most/],
  ])("fails on %j with nothing on stdout", async (args, expectedCode, message) => {
    const { code, stdout, stderr } = await cli(args as string[], env);
    expect(code).toBe(expectedCode);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
  });

  it("mints access tokens up to AIEM_TOKEN_MAX_LIFETIME", async () => {
    const { code, stdout } = await cli(["--user", "a", "--ttl", "7d"], { ...env, AIEM_TOKEN_MAX_LIFETIME: "604800" });
    expect(code).toBe(0);
    const claims = decodeJwt(stdout.trim());
    expect(claims.exp! - claims.iat!).toBe(604800);
    const { code: tooLong, stderr } = await cli(["--user", "a"], { ...env, AIEM_TOKEN_MAX_LIFETIME: "3600" });
    expect(tooLong).toBe(1);
    expect(stderr).toMatch(/at most 3600s/);
  });

  it("names a bad setting", async () => {
    const { code, stderr } = await cli(["--user", "a"], { ...env, AIEM_PORT: "x" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^AIEM_PORT: /);
  });

  it("needs the server's port to name its issuer", async () => {
    const { code, stdout, stderr } = await cli(["--user", "a"], { ...env, AIEM_PORT: "0" });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/AIEM_PORT is 0/);
  });

  it("refuses when the server verifies an OIDC issuer's tokens", async () => {
    const { code, stdout, stderr } = await cli(["--user", "a"], { ...env, AIEM_OIDC_ISSUER: "https://id.example.com" });
    expect(code).toBe(1);
    expect(stdout).toBe("");
    expect(stderr).toMatch(/AIEM_OIDC_ISSUER is set/);
  });

  it("works as a process, two at once on a fresh data directory", async () => {
    const fresh = await mkdtemp(path.join(tmpdir(), "aiem-token-"));
    try {
      // Only the data directory: an AIEM_PORT or AIEM_PUBLIC_URL of the caller would move the issuer.
      const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith("AIEM_"));
      const childEnv = { ...Object.fromEntries(inherited), AIEM_DATA_DIR: fresh };
      const [a, b] = await Promise.all([
        run(process.execPath, [bin, "--user", "alice"], { env: childEnv, cwd: root }),
        run("npm", ["run", "-s", "token", "--", "--user", "bob", "--admin"], { env: childEnv, cwd: root }),
      ]);
      expect(a.stdout).toMatch(JWT_LINE);
      expect(b.stdout).toMatch(JWT_LINE);
      const auth = createAuthenticator({ dataDir: fresh, embeddedIssuer: ISSUER });
      expect((await auth.authenticate(`Bearer ${a.stdout.trim()}`)).name).toBe("users/alice");
      expect((await auth.authenticate(`Bearer ${b.stdout.trim()}`)).admin).toBe(true);
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });
});

import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAuthenticator } from "./authenticator.js";
import { runTokenCli } from "./token-cli.js";

const run = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const bin = path.join(root, "services/kit/bin/token.mjs");
const JWT_LINE = /^[\w-]+\.[\w-]+\.[\w-]+\n$/;

async function cli(args: string[], env: Record<string, string>) {
  let stdout = "";
  let stderr = "";
  const code = await runTokenCli(args, env, (t) => (stdout += t), (t) => (stderr += t));
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
    const { code, stdout, stderr } = await cli(["--user", "alice", "--admin", "--role", "ds", "--role", "ops", "--name", "Alice A.", "--ttl", "2h"], env);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(JWT_LINE);
    const principal = await createAuthenticator({ dataDir }).authenticate(`Bearer ${stdout.trim()}`);
    expect(principal).toEqual({ name: "users/alice", subject: "alice", displayName: "Alice A.", roles: ["ds", "ops"], admin: true });
  });

  it.each([
    [[], 2, /--user is required/],
    [["--user"], 2, /argument missing/],
    [["--user", "a", "--what"], 2, /Unknown option '--what'/],
    [["--user", "a", "--ttl", "soon"], 1, /invalid --ttl/],
    [["--user", "a/b"], 1, /invalid user/],
  ])("fails on %j with nothing on stdout", async (args, expectedCode, message) => {
    const { code, stdout, stderr } = await cli(args as string[], env);
    expect(code).toBe(expectedCode);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message);
  });

  it("names a bad setting", async () => {
    const { code, stderr } = await cli(["--user", "a"], { ...env, AIEM_PORT: "x" });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^AIEM_PORT: /);
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
      const childEnv = { ...process.env, AIEM_DATA_DIR: fresh };
      const [a, b] = await Promise.all([
        run(process.execPath, [bin, "--user", "alice"], { env: childEnv, cwd: root }),
        run("npm", ["run", "-s", "token", "--", "--user", "bob", "--admin"], { env: childEnv, cwd: root }),
      ]);
      expect(a.stdout).toMatch(JWT_LINE);
      expect(b.stdout).toMatch(JWT_LINE);
      const auth = createAuthenticator({ dataDir: fresh });
      expect((await auth.authenticate(`Bearer ${a.stdout.trim()}`)).name).toBe("users/alice");
      expect((await auth.authenticate(`Bearer ${b.stdout.trim()}`)).admin).toBe(true);
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });
});

import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "./env.js";
import { loadSecretKey } from "./secret-key.js";

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "aiem-key-"));
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

const source = (value?: string) => ({ variable: "AIEM_TEST_KEY", value, dataDir, name: "test" });

describe("loadSecretKey", () => {
  it("creates a 32-byte key in the data directory once, readable by the owner only", async () => {
    const [a, b, c] = await Promise.all([loadSecretKey(source()), loadSecretKey(source()), loadSecretKey(source())]);
    expect(a).toHaveLength(32);
    expect(b).toEqual(a);
    expect(c).toEqual(a);
    const file = join(dataDir, "keys", "test.key");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(file, "utf8")).trim(), "base64")).toEqual(Buffer.from(a));
  });

  it("prefers the variable, so replicas can share a key", async () => {
    const value = Buffer.alloc(32, 5).toString("base64");
    expect(await loadSecretKey(source(value))).toEqual(new Uint8Array(32).fill(5));
  });

  it.each(["", "c2hvcnQ=", Buffer.alloc(33).toString("base64")])("rejects %j naming the variable", async (value) => {
    const err = await loadSecretKey(source(value)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/^AIEM_TEST_KEY: must be 32 bytes/);
  });
});

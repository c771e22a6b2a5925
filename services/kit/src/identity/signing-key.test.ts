import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDir } from "../testing/temp-dirs.js";
import { loadOrCreateSigningKey, signingKeyPath } from "./signing-key.js";

describe("loadOrCreateSigningKey", () => {
  const dataDir = useTempDir("aiem-key-");

  it("creates one private key file even when many callers race", async () => {
    const keys = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSigningKey(dataDir())));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    const file = signingKeyPath(dataDir());
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await readdir(path.dirname(file))).toEqual([path.basename(file)]);
    const again = await loadOrCreateSigningKey(dataDir());
    expect(again.kid).toBe(keys[0]?.kid);
    expect(again.alg).toBe("ES256");
  });
});

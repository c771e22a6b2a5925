import { hkdfSync, randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "./env.js";
import { createFileOnce } from "./create-file-once.js";

export interface SecretKeySource {
  /** Name of the variable that may hold the key (base64 of 32 bytes), for error messages. */
  readonly variable: string;
  /** The variable's value, when set. Replicas that share a database must share this key. */
  readonly value: string | undefined;
  readonly dataDir: string;
  /** File name under `<dataDir>/keys/`, used when the variable is unset. */
  readonly name: string;
}

/**
 * A 32-byte symmetric key (page-token HMAC, secret encryption): from its variable when set,
 * otherwise from the data directory, created on first use.
 */
export async function loadSecretKey(source: SecretKeySource): Promise<Uint8Array> {
  if (source.value !== undefined) return decode(source.value, source.variable);
  const file = path.join(source.dataDir, "keys", `${source.name}.key`);
  try {
    return decode(await readFile(file, "utf8"), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  await createFileOnce(file, `${randomBytes(32).toString("base64")}\n`);
  return decode(await readFile(file, "utf8"), file);
}

/**
 * A 32-byte key for one purpose, derived from AIEM_INTERNAL_KEY (or the data directory's
 * `keys/internal.key`), which the replicas and parts of a deployment share: parts agree on it
 * without another setting, and it never doubles as the internal key or another purpose's key.
 */
export async function deriveInternalKey(
  dataDir: string,
  internalKey: string | undefined,
  purpose: string,
): Promise<Uint8Array> {
  const root = await loadSecretKey({ variable: "AIEM_INTERNAL_KEY", value: internalKey, dataDir, name: "internal" });
  return new Uint8Array(hkdfSync("sha256", root, new Uint8Array(0), purpose, 32));
}

function decode(text: string, where: string): Uint8Array {
  const bytes = Buffer.from(text.trim(), "base64");
  if (bytes.length !== 32) {
    throw new ConfigError(where, "must be 32 bytes, base64-encoded (e.g. `openssl rand -base64 32`)");
  }
  return new Uint8Array(bytes);
}

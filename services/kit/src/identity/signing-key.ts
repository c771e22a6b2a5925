import { readFile } from "node:fs/promises";
import path from "node:path";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from "jose";
import { createFileOnce } from "../config/create-file-once.js";

export const SIGNING_ALGORITHM = "ES256";

/** The product's own token signing key (embedded mode, no OIDC issuer). */
export interface SigningKey {
  readonly alg: typeof SIGNING_ALGORITHM;
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
}

export function signingKeyPath(dataDir: string): string {
  return path.join(dataDir, "keys", "token-signing-key.jwk.json");
}

/**
 * Reads the key from the data directory, creating it on first use. Safe when the server
 * and the token command (or two replicas) start at once: everyone reads the first writer's key.
 */
export async function loadOrCreateSigningKey(dataDir: string): Promise<SigningKey> {
  const file = signingKeyPath(dataDir);
  const existing = await readKeyFile(file);
  if (existing) return existing;

  const { privateKey } = await generateKeyPair(SIGNING_ALGORITHM, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const { d: _d, ...publicJwk } = jwk;
  const kid = await calculateJwkThumbprint(publicJwk);
  await createFileOnce(file, `${JSON.stringify({ ...jwk, alg: SIGNING_ALGORITHM, kid, use: "sig" }, null, 2)}\n`);
  const key = await readKeyFile(file);
  if (!key) throw new Error(`signing key ${file} vanished while it was being created`);
  return key;
}

async function readKeyFile(file: string): Promise<SigningKey | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    const jwk = JSON.parse(text) as JWK;
    if (jwk.kty !== "EC" || jwk.crv !== "P-256" || typeof jwk.d !== "string" || typeof jwk.kid !== "string") {
      throw new Error("not a P-256 private key with a kid");
    }
    const { d: _d, ...publicJwk } = jwk;
    const privateKey = (await importJWK(jwk, SIGNING_ALGORITHM)) as CryptoKey;
    const publicKey = (await importJWK(publicJwk, SIGNING_ALGORITHM)) as CryptoKey;
    return { alg: SIGNING_ALGORITHM, kid: jwk.kid, privateKey, publicKey };
  } catch (err) {
    throw new Error(`signing key ${file} is unreadable: ${(err as Error).message}`, { cause: err });
  }
}

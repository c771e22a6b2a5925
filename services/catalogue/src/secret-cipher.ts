// The encryption of secret values: AES-256-GCM under the secrets key, each value bound (as
// additional authenticated data) to its version's name and its secret's uid, so a ciphertext
// copied onto another row does not decrypt.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

export interface SecretCipher {
  /** Short fingerprint of the key, stored beside each ciphertext to tell a wrong key from damage. */
  readonly keyId: string;
  encrypt(plaintext: Uint8Array, aad: string): { nonce: Uint8Array; ciphertext: Uint8Array };
  decrypt(nonce: Uint8Array, ciphertext: Uint8Array, aad: string): Uint8Array;
}

export function createSecretCipher(key: Uint8Array): SecretCipher {
  if (key.length !== 32) throw new Error("the secrets key must be 32 bytes");
  const k = Buffer.from(key);
  const keyId = createHash("sha256").update("aiem-secrets-key-id").update(k).digest("hex").slice(0, 16);
  return {
    keyId,
    encrypt(plaintext, aad) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", k, nonce);
      cipher.setAAD(Buffer.from(aad, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return { nonce, ciphertext: Buffer.concat([body, cipher.getAuthTag()]) };
    },
    decrypt(nonce, ciphertext, aad) {
      const data = Buffer.from(ciphertext);
      const decipher = createDecipheriv("aes-256-gcm", k, Buffer.from(nonce));
      decipher.setAAD(Buffer.from(aad, "utf8"));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return new Uint8Array(Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]));
    },
  };
}

/** The additional authenticated data of a version's value: its secret's uid and its own name. */
export function secretAad(uid: string, versionName: string): string {
  return `${uid}\n${versionName}`;
}

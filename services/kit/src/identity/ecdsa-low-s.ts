import { decodeProtectedHeader } from "jose";

/**
 * An ECDSA signature (r, s) verifies as (r, n - s) too, so one token would have two spellings.
 * Tokens are normalized to the low-s form (s <= n/2) before they are verified or remembered, and
 * the tokens we mint are normalized when signed: whatever keys on a token's text sees one token.
 */
const CURVE_ORDERS: Readonly<Record<string, { readonly order: bigint; readonly bytes: number }>> = {
  ES256: { order: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n, bytes: 32 },
  ES384: {
    order: 0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n,
    bytes: 48,
  },
  ES512: {
    order:
      0x01fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409n,
    bytes: 66,
  },
};

/** The token with a low-s signature; any other token (not ECDSA, malformed) comes back unchanged. */
export function lowSToken(token: string): string {
  const parts = token.split(".");
  if (parts.length !== 3) return token;
  let alg: string | undefined;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    return token;
  }
  const curve = alg === undefined ? undefined : CURVE_ORDERS[alg];
  if (!curve) return token;
  const signature = Buffer.from(parts[2]!, "base64url");
  // Verification rejects a signature of the wrong size or encoding; leave it to say so.
  if (signature.length !== curve.bytes * 2 || signature.toString("base64url") !== parts[2]) return token;
  const s = BigInt(`0x${signature.subarray(curve.bytes).toString("hex")}`);
  if (s <= curve.order / 2n) return token;
  const low = (curve.order - s).toString(16).padStart(curve.bytes * 2, "0");
  const normalized = Buffer.concat([signature.subarray(0, curve.bytes), Buffer.from(low, "hex")]);
  return `${parts[0]}.${parts[1]}.${normalized.toString("base64url")}`;
}

// AIP-158 page tokens: opaque to clients, HMAC-SHA256 signed, carrying the sort values of the last
// row of the page (keyset paging), bound to the request they were issued for and expiring.
// Format: base64url(JSON payload) "." base64url(HMAC-SHA256(key, first part)).
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { invalidArgument } from "../errors.js";

/** A sort value as carried in a token: exact text for numbers and times, null for NULL. */
export type KeyValue = string | boolean | null;

export const DEFAULT_PAGE_TOKEN_TTL_SECONDS = 24 * 60 * 60;
const MAX_TOKEN_LENGTH = 8192;
const VERSION = 1;

interface Payload {
  v: number;
  /** Sort values of the last row, one per order key, tiebreaker last. */
  k: KeyValue[];
  /** Binding hash of scope, parent, filter and order. */
  b: string;
  /** Expiry, seconds since the epoch. */
  e: number;
}

export interface PageTokenBinding {
  /** What is being listed, e.g. `daiEngines`, so a token cannot cross collections. */
  readonly scope?: string;
  readonly parent: string;
  /** Canonical filter text (formatFilter). */
  readonly filter: string;
  /** Canonical order (OrderBy.canonical). */
  readonly orderBy: string;
}

export interface PageTokenCodec {
  encode(keys: readonly KeyValue[], binding: PageTokenBinding): string;
  /**
   * Verifies and opens a token. Throws INVALID_ARGUMENT naming `page_token` when it is forged,
   * damaged, expired, or was issued for a different parent, filter or order.
   */
  decode(token: string, binding: PageTokenBinding): KeyValue[];
}

export interface PageTokenOptions {
  /**
   * Signing key, at least 32 bytes. A list rotates keys: the first signs, all verify, so tokens
   * issued just before a rotation keep working.
   */
  readonly key: Uint8Array | readonly Uint8Array[];
  readonly ttlSeconds?: number;
  /** Clock in milliseconds, for tests. */
  readonly now?: () => number;
}

function bindingHash(b: PageTokenBinding): string {
  // Length-prefixed so no two different bindings share a preimage.
  const parts = [b.scope ?? "", b.parent, b.filter, b.orderBy];
  const h = createHash("sha256");
  for (const p of parts) h.update(`${Buffer.byteLength(p)}:${p};`);
  return h.digest("base64url").slice(0, 22);
}

const INVALID = "is not a valid page token; pass the next_page_token of the previous response unchanged";

export function createPageTokenCodec(options: PageTokenOptions): PageTokenCodec {
  const keys = (options.key instanceof Uint8Array ? [options.key] : [...options.key]).map((k) => Buffer.from(k));
  if (keys.length === 0 || keys.some((k) => k.length < 32))
    throw new Error("page token keys must be at least 32 bytes");
  const ttl = options.ttlSeconds ?? DEFAULT_PAGE_TOKEN_TTL_SECONDS;
  const now = options.now ?? Date.now;
  const sign = (key: Buffer, body: string) => createHmac("sha256", key).update(body).digest();

  return {
    encode(values, binding) {
      const payload: Payload = {
        v: VERSION,
        k: [...values],
        b: bindingHash(binding),
        e: Math.floor(now() / 1000) + ttl,
      };
      const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
      return `${body}.${sign(keys[0]!, body).toString("base64url")}`;
    },
    decode(token, binding) {
      if (typeof token !== "string" || token.length > MAX_TOKEN_LENGTH) throw invalidArgument("page_token", INVALID);
      const dot = token.indexOf(".");
      if (dot <= 0 || dot !== token.lastIndexOf(".")) throw invalidArgument("page_token", INVALID);
      const body = token.slice(0, dot);
      const mac = Buffer.from(token.slice(dot + 1), "base64url");
      // Buffer.from(base64url) skips bad characters; insist on the canonical encoding instead.
      if (mac.length !== 32 || mac.toString("base64url") !== token.slice(dot + 1))
        throw invalidArgument("page_token", INVALID);
      if (!keys.some((k) => timingSafeEqual(sign(k, body), mac))) throw invalidArgument("page_token", INVALID);
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
      } catch {
        throw invalidArgument("page_token", INVALID);
      }
      if (!isPayload(payload)) throw invalidArgument("page_token", INVALID);
      if (payload.e * 1000 <= now()) {
        throw invalidArgument("page_token", "has expired; list again from the first page");
      }
      if (payload.b !== bindingHash(binding)) {
        throw invalidArgument(
          "page_token",
          "was issued for a different parent, filter or order_by; send the same ones as the first call, or start again without a token",
        );
      }
      return payload.k;
    },
  };
}

function isPayload(p: unknown): p is Payload {
  if (typeof p !== "object" || p === null) return false;
  const o = p as Record<string, unknown>;
  return (
    o.v === VERSION &&
    typeof o.b === "string" &&
    typeof o.e === "number" &&
    Number.isFinite(o.e) &&
    Array.isArray(o.k) &&
    o.k.every((x) => x === null || typeof x === "string" || typeof x === "boolean")
  );
}

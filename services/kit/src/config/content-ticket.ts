// A browser at a content origin cannot send the API's credentials (a bearer header it has no
// way to add to a link). A URL the API hands out for a browser to open carries a ticket instead:
// short-lived, for one origin, good once, sealed (AES-256-GCM) so that neither the link nor the
// browser's history shows the token it stands for. The edge at that origin opens it and answers
// with a host-only cookie of that origin alone (see the edge's content-origins.ts).
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { deriveInternalKey } from "./secret-key.js";

/** The query parameter that carries a ticket. */
export const TICKET_PARAM = "aiem_ticket";
/** How long a ticket may wait to be used. */
export const TICKET_TTL_MS = 120_000;

export interface TicketContents {
  /** The bearer token it stands for. */
  readonly token: string;
  /** The host (name and port) of the one origin it opens. */
  readonly host: string;
  /** Milliseconds since the epoch after which it is refused. */
  readonly expires: number;
  /** Makes it single-use: the edge remembers the nonces it took until they expire. */
  readonly nonce: string;
}

/** The ticket key, derived from the internal key, so the parts that mint and the edge that opens agree. */
export function loadTicketKey(dataDir: string, internalKey: string | undefined): Promise<Uint8Array> {
  return deriveInternalKey(dataDir, internalKey, "aiem content ticket v1");
}

export function sealTicket(key: Uint8Array, token: string, host: string, now = Date.now()): string {
  const contents: TicketContents = {
    token,
    host: host.toLowerCase(),
    expires: now + TICKET_TTL_MS,
    nonce: randomBytes(12).toString("base64url"),
  };
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(contents), "utf8"), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url");
}

/** The ticket's contents when it is ours, unaltered, for `host` and not expired; otherwise why not. */
export function openTicket(
  key: Uint8Array,
  ticket: string,
  host: string,
  now = Date.now(),
): TicketContents | { readonly refused: string } {
  const bytes = Buffer.from(ticket, "base64url");
  if (bytes.length < 12 + 16 + 2) return { refused: "not a ticket" };
  let contents: TicketContents;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    const text = Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString(
      "utf8",
    );
    contents = JSON.parse(text) as TicketContents;
  } catch {
    return { refused: "not a ticket of this server" };
  }
  if (contents.host !== host.toLowerCase()) return { refused: "the ticket is for another origin" };
  if (!(contents.expires > now)) return { refused: "the ticket has expired" };
  return contents;
}

/** Nonces of tickets already taken, kept until they expire (one edge process's memory). */
export function createTicketLedger(): { take(contents: TicketContents, now?: number): boolean } {
  const taken = new Map<string, number>();
  return {
    take(contents, now = Date.now()) {
      for (const [nonce, expires] of taken) if (expires <= now) taken.delete(nonce);
      if (taken.has(contents.nonce)) return false;
      taken.set(contents.nonce, contents.expires);
      return true;
    },
  };
}

/** `url` with a ticket for its origin, sealed for `authorization`'s bearer token; `url` as is without one. */
export function withTicket(key: Uint8Array, url: string, authorization: string | null | undefined): string {
  const token = /^bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
  if (!token) return url;
  const target = new URL(url);
  target.searchParams.set(TICKET_PARAM, sealTicket(key, token, target.host));
  return target.toString();
}

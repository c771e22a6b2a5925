import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  createTicketLedger,
  loadTicketKey,
  openTicket,
  sealTicket,
  TICKET_PARAM,
  TICKET_TTL_MS,
  withTicket,
} from "./content-ticket.js";

const key = new Uint8Array(randomBytes(32));
const host = "0b6a3e8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b.engines.localhost:8080";

describe("content tickets", () => {
  it("opens for its origin only, until it expires, and shows nothing of the token", () => {
    const now = 1_000_000;
    const ticket = sealTicket(key, "the-bearer-token", host, now);
    expect(Buffer.from(ticket, "base64url").toString("latin1")).not.toContain("the-bearer-token");
    expect(openTicket(key, ticket, host.toUpperCase(), now + 1)).toMatchObject({
      token: "the-bearer-token",
      host,
      expires: now + TICKET_TTL_MS,
    });
    expect(openTicket(key, ticket, "other.engines.localhost:8080", now)).toEqual({
      refused: "the ticket is for another origin",
    });
    expect(openTicket(key, ticket, host, now + TICKET_TTL_MS)).toEqual({ refused: "the ticket has expired" });
    expect(openTicket(new Uint8Array(randomBytes(32)), ticket, host, now)).toEqual({
      refused: "not a ticket of this server",
    });
    const flipped = Buffer.from(ticket, "base64url");
    flipped[20] = flipped[20]! ^ 1;
    expect(openTicket(key, flipped.toString("base64url"), host, now)).toEqual({
      refused: "not a ticket of this server",
    });
    expect(openTicket(key, "short", host, now)).toEqual({ refused: "not a ticket" });
  });

  it("is taken once; the ledger forgets nonces once they could no longer open", () => {
    const ledger = createTicketLedger();
    const contents = openTicket(key, sealTicket(key, "t", host, 0), host, 1);
    if ("refused" in contents) throw new Error(contents.refused);
    expect(ledger.take(contents, 1)).toBe(true);
    expect(ledger.take(contents, 2)).toBe(false);
    expect(ledger.take({ ...contents, nonce: "other" }, TICKET_TTL_MS + 1)).toBe(true);
  });

  it("adds a ticket to a URL for a bearer caller, keeping its path and query", () => {
    const url = withTicket(key, `http://${host}/engines/x/lab?a=1`, "Bearer tok");
    const parsed = new URL(url);
    expect(parsed.pathname).toBe("/engines/x/lab");
    expect(parsed.searchParams.get("a")).toBe("1");
    expect(openTicket(key, parsed.searchParams.get(TICKET_PARAM)!, host)).toMatchObject({ token: "tok" });
    expect(withTicket(key, `http://${host}/`, undefined)).toBe(`http://${host}/`);
  });

  it("derives the same key from the same internal key, a different one from another", async () => {
    const dir = await mkdtemp(join(tmpdir(), "aiem-ticket-"));
    try {
      const internal = randomBytes(32).toString("base64");
      expect(await loadTicketKey(dir, internal)).toEqual(await loadTicketKey(join(dir, "other"), internal));
      expect(await loadTicketKey(dir, undefined)).toEqual(await loadTicketKey(dir, undefined));
      expect(await loadTicketKey(dir, undefined)).not.toEqual(await loadTicketKey(dir, internal));
      expect(Buffer.from(await loadTicketKey(dir, internal))).not.toEqual(Buffer.from(internal, "base64"));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

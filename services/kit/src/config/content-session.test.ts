import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  loadSessionKey,
  openSession,
  sealSession,
  secureOrigin,
  SESSION_MAX_MS,
  sessionCookie,
  sessionExpiry,
  sessionFromCookies,
  sessionScope,
} from "./content-session.js";
import { loadTicketKey } from "./content-ticket.js";

const alice = { name: "users/alice", subject: "alice", displayName: "Alice", roles: ["r"], admin: false };
const jwt = (payload: object) => `e30.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.sig`;

describe("content sessions", () => {
  const key = new Uint8Array(randomBytes(32));
  const scope = sessionScope("8080-UID.sandboxes.localhost:9000");

  it("open for their own scope only, unaltered, until they expire", () => {
    const now = 1_000_000;
    const sealed = sealSession(key, alice, scope, now + 60_000);
    expect(sealed).not.toContain("alice");
    expect(openSession(key, sealed, scope, now)).toEqual(alice);
    expect(openSession(key, sealed, sessionScope("8080-uid.public.localhost:9000"), now)).toBeUndefined();
    expect(openSession(key, sealed, sessionScope("localhost:9000", "/sandboxes/uid/ports/8080"), now)).toBeUndefined();
    expect(openSession(key, sealed, scope, now + 60_000)).toBeUndefined();
    expect(openSession(new Uint8Array(randomBytes(32)), sealed, scope, now)).toBeUndefined();
    const altered = Buffer.from(sealed, "base64url");
    altered[14]! ^= 1;
    expect(openSession(key, altered.toString("base64url"), scope, now)).toBeUndefined();
    expect(openSession(key, "not-a-session", scope, now)).toBeUndefined();
  });

  it("take the first session cookie of the request that opens here", () => {
    const other = sealSession(key, { ...alice, name: "users/bob" }, sessionScope("x.localhost"), Date.now() + 60_000);
    const mine = sealSession(key, alice, scope, Date.now() + 60_000);
    expect(sessionFromCookies(key, `a=1; aiem_session=${other}; __Host-aiem_session=${mine}`, scope)?.name).toBe(
      "users/alice",
    );
    expect(sessionFromCookies(key, `__Host-aiem_session=${other}`, scope)).toBeUndefined();
    expect(sessionFromCookies(key, `theirs=${mine}`, scope)).toBeUndefined();
    expect(sessionFromCookies(key, undefined, scope)).toBeUndefined();
  });

  it("end with their token, and within twelve hours", () => {
    const now = 1_700_000_000_000;
    expect(sessionExpiry(jwt({ exp: now / 1000 + 60 }), now)).toBe(now + 60_000);
    expect(sessionExpiry(jwt({ exp: now / 1000 + 10 * 86_400 }), now)).toBe(now + SESSION_MAX_MS);
    expect(sessionExpiry("opaque", now)).toBe(now + SESSION_MAX_MS);
  });

  it("live in a __Host- cookie at an origin of its own that takes Secure, a path cookie otherwise", () => {
    const now = 0;
    expect(sessionCookie("v", { path: "/", secure: true, expires: 90_000, now })).toBe(
      "__Host-aiem_session=v; Path=/; Max-Age=90; HttpOnly; SameSite=Lax; Secure",
    );
    expect(sessionCookie("v", { path: "/", secure: false, expires: 90_000, now })).toBe(
      "aiem_session=v; Path=/; Max-Age=90; HttpOnly; SameSite=Lax",
    );
    expect(sessionCookie("v", { path: "/engines/u/", secure: true, expires: 90_000, now })).toBe(
      "aiem_session=v; Path=/engines/u/; Max-Age=90; HttpOnly; SameSite=Lax; Secure",
    );
    expect(secureOrigin("1-u.sandboxes.localhost:8080", undefined)).toBe(true);
    expect(secureOrigin("localhost", "http")).toBe(true);
    expect(secureOrigin("content.example.com", "https")).toBe(true);
    expect(secureOrigin("content.example.com:80", undefined)).toBe(false);
    expect(secureOrigin("localhost.example.com", undefined)).toBe(false);
  });

  it("are sealed with a key of their own, derived from the data directory's internal key (mode 0600)", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "aiem-session-"));
    try {
      const first = await loadSessionKey(dir, undefined);
      expect(await loadSessionKey(dir, undefined)).toEqual(first);
      expect(await loadTicketKey(dir, undefined)).not.toEqual(first);
      expect((await stat(path.join(dir, "keys", "internal.key"))).mode & 0o777).toBe(0o600);
      const given = randomBytes(32).toString("base64");
      expect(await loadSessionKey(dir, given)).not.toEqual(first);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

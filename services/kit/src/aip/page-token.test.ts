import { createHmac } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type PageTokenBinding, createPageTokenCodec } from "./page-token.js";
import { invalidArgumentMessage } from "./test-support.js";

const key = new Uint8Array(32).fill(7);
const otherKey = new Uint8Array(32).fill(9);
const binding: PageTokenBinding = {
  scope: "daiEngines",
  parent: "workspaces/a",
  filter: 'cpu >= "2"',
  orderBy: "create_time desc, uid desc",
};
const values = ["2024-01-01T00:00:00.123456Z", "e-1"];

const rejected = invalidArgumentMessage;

const INVALID = /^page_token: is not a valid page token/;

describe("page tokens", () => {
  it("round-trips the sort values of the last row", () => {
    const codec = createPageTokenCodec({ key });
    const token = codec.encode([...values, null, true], binding);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(codec.decode(token, binding)).toEqual([...values, null, true]);
  });

  it("rejects forged tokens: changed payload, changed signature, another key", () => {
    const codec = createPageTokenCodec({ key });
    const token = codec.encode(values, binding);
    const [body, mac] = token.split(".") as [string, string];
    const payload = JSON.parse(Buffer.from(body, "base64url").toString());
    payload.k = ["2099-01-01T00:00:00.000000Z", "zzz"];
    const forgedBody = Buffer.from(JSON.stringify(payload)).toString("base64url");
    expect(rejected(() => codec.decode(`${forgedBody}.${mac}`, binding))).toMatch(INVALID);
    const flipped = mac.slice(0, 10) + (mac[10] === "A" ? "B" : "A") + mac.slice(11);
    expect(rejected(() => codec.decode(`${body}.${flipped}`, binding))).toMatch(INVALID);
    expect(rejected(() => createPageTokenCodec({ key: otherKey }).decode(token, binding))).toMatch(INVALID);
    // Signed correctly, but not a payload this codec writes.
    for (const junk of [
      "null",
      "[]",
      '{"v":2,"k":[],"b":"x","e":9999999999}',
      '{"v":1,"k":[{}],"b":"x","e":9999999999}',
      "{not json",
    ]) {
      const b = Buffer.from(junk).toString("base64url");
      const m = createHmac("sha256", key).update(b).digest("base64url");
      expect(
        rejected(() => codec.decode(`${b}.${m}`, binding)),
        junk,
      ).toMatch(INVALID);
    }
  });

  it("rejects truncated and malformed tokens", () => {
    const codec = createPageTokenCodec({ key });
    const token = codec.encode(values, binding);
    for (const bad of [
      token.slice(0, -1),
      token.slice(0, token.length / 2),
      token.slice(1),
      token.split(".")[0]!,
      `${token}.x`,
      `.${token.split(".")[1]}`,
      `${token.split(".")[0]}.`,
      `${token}=`,
      token.replace(".", ".!"),
      "",
      "garbage",
      "x".repeat(10_000),
      "🙂.🙂",
    ]) {
      expect(
        rejected(() => codec.decode(bad, binding)),
        bad.slice(0, 40),
      ).toMatch(INVALID);
    }
  });

  it("rejects stale tokens", () => {
    let now = 1_700_000_000_000;
    const codec = createPageTokenCodec({ key, ttlSeconds: 60, now: () => now });
    const token = codec.encode(values, binding);
    now += 59_000;
    expect(codec.decode(token, binding)).toEqual(values);
    now += 1_000;
    expect(rejected(() => codec.decode(token, binding))).toBe(
      "page_token: has expired; list again from the first page",
    );
  });

  it("rejects tokens reused with another parent, filter, order or collection", () => {
    const codec = createPageTokenCodec({ key });
    const token = codec.encode(values, binding);
    for (const other of [
      { ...binding, parent: "workspaces/b" },
      { ...binding, filter: 'cpu >= "3"' },
      { ...binding, filter: "" },
      { ...binding, orderBy: "create_time, uid" },
      { ...binding, scope: "h2oEngines" },
      { ...binding, scope: undefined },
      // Moving text between fields must not collide.
      { ...binding, parent: "workspaces/a", filter: "", orderBy: `cpu >= "2"create_time desc, uid desc` },
    ]) {
      expect(rejected(() => codec.decode(token, other))).toMatch(
        /^page_token: was issued for a different parent, filter or order_by/,
      );
    }
  });

  it("verifies with every key of a rotation and signs with the first", () => {
    const old = createPageTokenCodec({ key: otherKey });
    const rotated = createPageTokenCodec({ key: [key, otherKey] });
    expect(rotated.decode(old.encode(values, binding), binding)).toEqual(values);
    const fresh = rotated.encode(values, binding);
    expect(createPageTokenCodec({ key }).decode(fresh, binding)).toEqual(values);
    expect(() => old.decode(fresh, binding)).toThrow(ConnectError);
  });

  it("refuses short keys", () => {
    expect(() => createPageTokenCodec({ key: new Uint8Array(16) })).toThrow(/at least 32 bytes/);
    expect(() => createPageTokenCodec({ key: [] })).toThrow(/at least 32 bytes/);
  });
});

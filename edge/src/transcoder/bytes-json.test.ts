import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { base64Decode } from "@bufbuild/protobuf/wire";
import { describe, expect, it } from "vitest";
import { TunnelRequestSchema, TunnelResponseSchema } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import {
  ReadFileResponseSchema,
  WriteFileRequestSchema,
} from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { ReadProcessOutputFramesResponseSchema } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import {
  LARGE_BYTES,
  base64Texts,
  decodeCanonicalBase64,
  jsonPieces,
  largeBytes,
  messageFromJson,
  messageToJson,
  pieceLength,
} from "./bytes-json.js";

/** Every byte value, then bytes from a fixed-seed generator (the same on every run). */
function binary(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out[i] = i < 256 ? i : x >>> 24;
  }
  return out;
}

const opts = { alwaysEmitImplicit: true } as const;

describe("messageToJson", () => {
  it("writes exactly the JSON of protobuf-es for binary content of every length mod 3", () => {
    for (const length of [0, 1, 2, 3, 255, 256, 257, 4095, 4096, 70_001]) {
      const message = create(ReadFileResponseSchema, {
        content: binary(length, length),
        fileInfo: { path: "/workspace/a", size: BigInt(length) },
      });
      const expected = toJson(ReadFileResponseSchema, message, opts);
      expect(messageToJson(ReadFileResponseSchema, message, opts)).toEqual(expected);
      // The message itself is left as it was.
      expect(message.content).toEqual(binary(length, length));
    }
  });

  it("leaves large values out of the text, for pieces that put together give the same JSON", () => {
    for (const length of [LARGE_BYTES - 1, LARGE_BYTES, LARGE_BYTES + 1, 3 * LARGE_BYTES + 2]) {
      // A path that looks like a marker of another response stays text.
      const message = create(ReadFileResponseSchema, {
        content: binary(length, length),
        fileInfo: { path: "/workspace/@aiem-bytes-x:0@", size: BigInt(length) },
      });
      const large = largeBytes();
      const pieces = jsonPieces(JSON.stringify(messageToJson(ReadFileResponseSchema, message, opts, large)), large);
      expect(pieces.some((p) => typeof p !== "string")).toBe(length >= LARGE_BYTES);
      const joined = pieces.map((p) => (typeof p === "string" ? p : Buffer.from(p).toString("base64"))).join("");
      expect(joined).toBe(JSON.stringify(toJson(ReadFileResponseSchema, message, opts)));
      expect(pieces.reduce((n, p) => n + pieceLength(p), 0)).toBe(Buffer.byteLength(joined));
    }
  });

  it("writes a large value as base64 texts of at most 64 KiB that join into the whole value's base64", () => {
    for (const length of [0, 1, (48 << 10) - 1, 48 << 10, (48 << 10) + 1, (3 << 20) + 2]) {
      const bytes = binary(length, length);
      const texts = [...base64Texts(bytes)];
      expect(texts.join("")).toBe(Buffer.from(bytes).toString("base64"));
      expect(Math.max(0, ...texts.map((t) => t.length))).toBeLessThanOrEqual(64 << 10);
    }
  });

  it("encodes bytes inside repeated messages and oneof members, and leaves unset ones alone", () => {
    const frames = create(ReadProcessOutputFramesResponseSchema, {
      frames: [
        { data: binary(10, 2), offset: 0n },
        { data: new Uint8Array(0), offset: 10n },
        { data: binary(1000, 3), offset: 10n },
      ],
      droppedBytes: 7n,
    });
    expect(messageToJson(ReadProcessOutputFramesResponseSchema, frames, opts)).toEqual(
      toJson(ReadProcessOutputFramesResponseSchema, frames, opts),
    );
    expect(messageToJson(ReadProcessOutputFramesResponseSchema, frames)).toEqual(
      toJson(ReadProcessOutputFramesResponseSchema, frames),
    );

    const data = create(TunnelResponseSchema, { frame: { case: "data", value: binary(33, 4) } });
    expect(messageToJson(TunnelResponseSchema, data)).toEqual(toJson(TunnelResponseSchema, data));
    const opened = create(TunnelResponseSchema, { frame: { case: "opened", value: {} } });
    expect(messageToJson(TunnelResponseSchema, opened)).toEqual(toJson(TunnelResponseSchema, opened));
  });
});

describe("messageFromJson", () => {
  it("round-trips binary content to the same bytes protobuf-es reads", () => {
    for (const length of [0, 1, 2, 3, 4096, 100_003]) {
      const content = binary(length, length + 9);
      const json = {
        path: "/workspace/a",
        content: Buffer.from(content).toString("base64"),
        overwrite: true,
      } as JsonValue;
      const fast = messageFromJson(WriteFileRequestSchema, structuredClone(json));
      const slow = fromJson(WriteFileRequestSchema, json);
      expect(fast).toEqual(slow);
      expect(new Uint8Array(fast.content as Uint8Array)).toEqual(content);
    }
  });

  it("leaves every other spelling to protobuf-es: base64url, no padding, white space, inner padding", () => {
    for (const text of ["-_-_", "+/+/", "QUI", "QUJD\nREVG", "QQ==QQ==", "QUJDREVG", ""]) {
      const json = { content: text } as JsonValue;
      expect(messageFromJson(WriteFileRequestSchema, structuredClone(json))).toEqual(
        fromJson(WriteFileRequestSchema, json),
      );
    }
  });

  it("rejects invalid base64 as protobuf-es does", () => {
    const json = { content: "QUJD?REV" } as JsonValue;
    expect(() => fromJson(WriteFileRequestSchema, structuredClone(json))).toThrow();
    expect(() => messageFromJson(WriteFileRequestSchema, structuredClone(json))).toThrow(/invalid base64/);
  });

  it("decodes into oneof members and into messages in lists", () => {
    const data = { data: Buffer.from(binary(300, 5)).toString("base64") } as JsonValue;
    expect(messageFromJson(TunnelRequestSchema, structuredClone(data))).toEqual(fromJson(TunnelRequestSchema, data));
    const frames = {
      frames: [{ data: Buffer.from(binary(5000, 6)).toString("base64"), offset: "0" }, { offset: "5000" }],
      droppedBytes: "1",
    } as JsonValue;
    expect(messageFromJson(ReadProcessOutputFramesResponseSchema, structuredClone(frames))).toEqual(
      fromJson(ReadProcessOutputFramesResponseSchema, frames),
    );
  });
});

describe("decodeCanonicalBase64", () => {
  it("agrees with protobuf-es wherever it answers, and declines whatever is not canonical", () => {
    const samples = ["", "AA==", "AAA=", "AAAA", "QR==", "QUJD", "Q===", "=AAA", "A=AA", "QUJD REV", "QUJD\tREV="];
    for (let i = 0; i < 200; i++) samples.push(Buffer.from(binary(i, i)).toString("base64"));
    for (const text of samples) {
      const fast = decodeCanonicalBase64(text);
      if (fast === undefined) {
        expect(
          Buffer.from(Buffer.from(text, "base64").toString("base64")).toString() === text && text.length % 4 === 0,
        ).toBe(false);
        continue;
      }
      expect(fast).toEqual(base64Decode(text));
    }
  });
});

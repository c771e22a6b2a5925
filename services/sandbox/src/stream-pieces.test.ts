import { PassThrough, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readInto, streamChunks, streamPieces } from "./stream-pieces.js";

async function collect(stream: Readable, size: number): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for await (const piece of streamPieces(stream, size)) out.push(piece);
  return out;
}

describe("streamPieces", () => {
  it("cuts what arrives in chunks of any size into pieces of the size asked, the rest last", async () => {
    // Chunks that arrive one by one with I/O between them, smaller and larger than a piece.
    const sizes = [3, 10, 1, 25, 7];
    const source = Readable.from(
      (async function* () {
        for (const [i, n] of sizes.entries()) {
          yield Buffer.alloc(n, i);
          await new Promise((r) => setTimeout(r, 2));
        }
      })(),
      { objectMode: false },
    );
    const pieces = await collect(source, 8);
    expect(pieces.map((p) => p.length)).toEqual([8, 8, 8, 8, 8, 6]);
    expect(Buffer.concat(pieces)).toEqual(Buffer.concat(sizes.map((n, i) => Buffer.alloc(n, i))));
  });

  it("ends on an empty stream, and fails with the stream's error", async () => {
    const empty = new PassThrough();
    empty.end();
    expect(await collect(empty, 8)).toEqual([]);
    const broken = new PassThrough();
    broken.write(Buffer.alloc(4));
    setTimeout(() => broken.destroy(new Error("reset")), 5);
    await expect(collect(broken, 8)).rejects.toThrow("reset");
    const closed = new PassThrough();
    setTimeout(() => closed.destroy(), 5);
    await expect(collect(closed, 8)).rejects.toThrow("closed before its end");
  });
});

describe("readInto", () => {
  it("copies chunks of any size into the target as they arrive, and says how many bytes there were", async () => {
    const source = new PassThrough();
    const target = new Uint8Array(40);
    const reading = readInto(source, target);
    for (const [i, n] of [3, 10, 1, 25].entries()) {
      source.write(Buffer.alloc(n, i + 1));
      await new Promise((r) => setTimeout(r, 2));
    }
    source.end();
    expect(await reading).toBe(39);
    expect(Buffer.from(target.subarray(0, 39))).toEqual(
      Buffer.concat([3, 10, 1, 25].map((n, i) => Buffer.alloc(n, i + 1))),
    );
  });

  it("fails on more bytes than the target holds, on the stream's error, and on a close before the end", async () => {
    const long = new PassThrough();
    const tooMany = readInto(long, new Uint8Array(4));
    long.write(Buffer.alloc(5));
    await expect(tooMany).rejects.toThrow("more than the 4 bytes");
    const broken = new PassThrough();
    const failing = readInto(broken, new Uint8Array(8));
    broken.write(Buffer.alloc(4));
    setTimeout(() => broken.destroy(new Error("reset")), 5);
    await expect(failing).rejects.toThrow("reset");
    const closed = new PassThrough();
    const cut = readInto(closed, new Uint8Array(8));
    setTimeout(() => closed.destroy(), 5);
    await expect(cut).rejects.toThrow("closed before its end");
  });
});

describe("streamChunks", () => {
  it("gives lists of the stream's own chunks of the size asked, cutting only those that cross", async () => {
    const sizes = [3, 10, 1, 25, 7];
    const chunks = sizes.map((n, i) => Buffer.alloc(n, i + 1));
    const source = new PassThrough();
    const lists: Buffer[][] = [];
    const reading = (async () => {
      for await (const list of streamChunks(source, 8)) lists.push(list);
    })();
    for (const chunk of chunks) {
      source.write(chunk);
      await new Promise((r) => setTimeout(r, 2));
    }
    source.end();
    await reading;
    expect(lists.map((l) => l.reduce((n, c) => n + c.length, 0))).toEqual([8, 8, 8, 8, 8, 6]);
    expect(Buffer.concat(lists.flat())).toEqual(Buffer.concat(chunks));
    // The 25-byte chunk reaches the caller as views of it, not copies.
    const views = lists.flat().filter((c) => c.buffer === chunks[3]!.buffer && c.length > 0);
    expect(views.reduce((n, c) => n + c.length, 0)).toBe(25);
  });

  it("takes a stream that runs ahead of its reader whole, ends on an empty one, and fails with the stream's error", async () => {
    const fast = new PassThrough({ highWaterMark: 4 });
    for (let i = 0; i < 20; i++) fast.write(Buffer.alloc(4, i));
    fast.end();
    let total = 0;
    for await (const list of streamChunks(fast, 8)) {
      total += list.reduce((n, c) => n + c.length, 0);
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(total).toBe(80);
    const empty = new PassThrough();
    empty.end();
    const none: Buffer[][] = [];
    for await (const list of streamChunks(empty, 8)) none.push(list);
    expect(none).toEqual([]);
    const broken = new PassThrough();
    broken.write(Buffer.alloc(4));
    setTimeout(() => broken.destroy(new Error("reset")), 5);
    await expect(
      (async () => {
        for await (const _ of streamChunks(broken, 8));
      })(),
    ).rejects.toThrow("reset");
    const closed = new PassThrough();
    setTimeout(() => closed.destroy(), 5);
    await expect(
      (async () => {
        for await (const _ of streamChunks(closed, 8));
      })(),
    ).rejects.toThrow("closed before its end");
  });
});

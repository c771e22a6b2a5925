import { describe, expect, it } from "vitest";
import { createOutputLog } from "./output-log.js";

const b = (s: string) => Buffer.from(s);
const joined = (chunks: { data: Buffer }[]) => Buffer.concat(chunks.map((c) => c.data)).toString();

describe("output log", () => {
  it("keeps stream and offset of every chunk in arrival order", () => {
    const log = createOutputLog(1024);
    log.append("stdout", b("ab"));
    log.append("stderr", b("cde"));
    log.append("stdout", b("f"));
    expect(log.read(0, 100).map((c) => [c.stream, c.offset, c.data.toString()])).toEqual([
      ["stdout", 0, "ab"],
      ["stderr", 2, "cde"],
      ["stdout", 5, "f"],
    ]);
    expect(log.collect("combined")).toEqual({ data: b("abcdef"), dropped: 0 });
    expect(log.collect("stdout").data.toString()).toBe("abf");
    expect(log.collect("stderr").data.toString()).toBe("cde");
  });

  it("reads from any offset, cutting the first chunk", () => {
    const log = createOutputLog(1024);
    log.append("stdout", b("hello"));
    log.append("stderr", b("world"));
    expect(log.read(3, 100).map((c) => [c.offset, c.data.toString()])).toEqual([
      [3, "lo"],
      [5, "world"],
    ]);
    expect(log.read(7, 100).map((c) => [c.offset, c.data.toString()])).toEqual([[7, "rld"]]);
    expect(log.read(10, 100)).toEqual([]);
  });

  it("discards the oldest bytes beyond the limit and counts them per stream", () => {
    const log = createOutputLog(10);
    log.append("stdout", b("0123456"));
    log.append("stderr", b("ABCDEF"));
    expect(log.start).toBe(3);
    expect(log.end).toBe(13);
    expect(log.collect("combined")).toEqual({ data: b("3456ABCDEF"), dropped: 3 });
    expect(log.collect("stdout")).toEqual({ data: b("3456"), dropped: 3 });
    expect(log.collect("stderr")).toEqual({ data: b("ABCDEF"), dropped: 0 });
    log.append("stdout", b("xyzxyz"));
    expect(log.collect("stderr")).toEqual({ data: b("CDEF"), dropped: 2 });
    expect(log.collect("stdout")).toEqual({ data: b("xyzxyz"), dropped: 7 });
    expect(joined(log.read(0, 100))).toBe("CDEFxyzxyz");
  });

  it("resuming at offset + length of the last chunk read gives every byte exactly once", () => {
    const log = createOutputLog(1 << 20);
    let expected = "";
    for (let i = 0; i < 500; i++) {
      const s = `${i % 2 ? "E" : "O"}${i};`;
      log.append(i % 2 ? "stderr" : "stdout", b(s));
      expected += s;
    }
    let offset = 0;
    let got = "";
    while (offset < log.end) {
      const chunks = log.read(offset, 37);
      const first = chunks[0]!;
      got += first.data.toString();
      offset = first.offset + first.data.length;
    }
    expect(got).toBe(expected);
  });

  it("wakes waiters on append and seal, and ignores appends after the seal", async () => {
    const log = createOutputLog(100);
    const waiting = log.changed();
    log.append("stdout", b("x"));
    await waiting;
    const sealed = log.changed();
    log.seal();
    await sealed;
    log.append("stdout", b("late"));
    expect(log.end).toBe(1);
    await log.changed();
    const abort = new AbortController();
    const open = createOutputLog(100).changed(abort.signal);
    abort.abort();
    await open;
  });

  it("releases everything it keeps on request, counting it as dropped", () => {
    const log = createOutputLog(1024);
    log.append("stdout", b("abc"));
    log.append("stderr", b("de"));
    expect(log.kept).toBe(5);
    log.release();
    expect([log.kept, log.start, log.end]).toEqual([0, 5, 5]);
    expect(log.collect("combined")).toEqual({ data: b(""), dropped: 5 });
    expect(log.collect("stdout")).toEqual({ data: b(""), dropped: 3 });
    expect(log.read(0, 100)).toEqual([]);
    log.append("stdout", b("f"));
    expect(log.read(5, 100).map((c) => [c.offset, c.data.toString()])).toEqual([[5, "f"]]);
  });
});

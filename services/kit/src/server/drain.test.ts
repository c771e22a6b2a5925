import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { drained } from "./drain.js";

function response(needDrain: boolean | undefined) {
  return Object.assign(new EventEmitter(), { writableNeedDrain: needDrain });
}

async function settledWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setTimeout(resolve, ms));
  return settled;
}

describe("drained", () => {
  it("does not wait for a response whose buffer was flushed already (its drain came before)", async () => {
    expect(await settledWithin(drained(response(false)), 20)).toBe(true);
  });

  it("waits for the drain of a response that still needs one", async () => {
    const res = response(true);
    const waiting = drained(res);
    expect(await settledWithin(waiting, 20)).toBe(false);
    res.emit("drain");
    expect(await settledWithin(waiting, 5)).toBe(true);
    expect(res.listenerCount("drain") + res.listenerCount("close")).toBe(0);
  });

  it("ends the wait when the response closes", async () => {
    const res = response(undefined);
    const waiting = drained(res);
    res.emit("close");
    expect(await settledWithin(waiting, 5)).toBe(true);
  });
});

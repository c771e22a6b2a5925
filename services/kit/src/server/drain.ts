/**
 * Resolves once a response that refused a write can take more (`drain`), or is gone (`close`).
 * A write refused inside a corked batch may have been flushed by the uncork already, its `drain`
 * emitted before anyone listened (Node 24 does so): a response that no longer needs a drain is
 * not waited for.
 */
export function drained(res: {
  readonly writableNeedDrain?: boolean;
  on(event: "drain" | "close", listener: () => void): unknown;
  off(event: "drain" | "close", listener: () => void): unknown;
}): Promise<void> {
  if (res.writableNeedDrain === false) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

// The one way a test waits for a condition: poll it, and fail with what was awaited when it does
// not come in time. Never a sleep standing in for a state.

export interface WaitOptions {
  /** How long to poll before failing; 5 s unless told. */
  readonly timeoutMs?: number;
  /** The pause between two checks; 20 ms unless told. */
  readonly intervalMs?: number;
  /** What is awaited, for the failure's message; a function to say what was last seen. */
  readonly what?: string | (() => string);
}

/** What a check returns once it holds: anything but `false`, `undefined`, `null`, `0` or `""`. */
export type Held<T> = Exclude<T, false | undefined | null | 0 | "">;

/**
 * Calls `check` until it returns a value that holds, and returns that value (`true` for a plain
 * condition); throws after `timeoutMs`. `options` may be the timeout alone.
 */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  options: WaitOptions | number = {},
  what?: string | (() => string),
): Promise<Held<T>> {
  const {
    timeoutMs = 5_000,
    intervalMs = 20,
    what: named,
  } = typeof options === "number" ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Held<T>;
    if (Date.now() > deadline) {
      const awaited = what ?? named ?? "condition";
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof awaited === "string" ? awaited : awaited()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

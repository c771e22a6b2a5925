// Reading streamed answers, and waiting for what the service does in its own time.
import { type RestJson, waitFor } from "@aiem/kit/testing";

/** Reads an NDJSON stream response until it ends or `until` says stop; returns the parsed lines. */
export async function readNdjson(
  res: Response,
  until?: (line: RestJson, all: RestJson[]) => boolean,
): Promise<RestJson[]> {
  const lines: RestJson[] = [];
  const reader = res.body!.getReader();
  let pending = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (!line) continue;
      const parsed = JSON.parse(line);
      lines.push(parsed);
      if (until?.(parsed, lines)) {
        await reader.cancel();
        return lines;
      }
    }
  }
  if (pending.trim()) lines.push(JSON.parse(pending));
  return lines;
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** Polls `check` until it holds; fails after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  await waitFor(check, { timeoutMs, what: () => check.toString() });
}

/** Polls a measure that may still grow until two reads 200 ms apart agree, and returns it. */
export async function settled(measure: () => Promise<number>, timeoutMs = 15_000): Promise<number> {
  let last = await measure();
  for (const deadline = Date.now() + timeoutMs; ; ) {
    await sleep(200);
    const now = await measure();
    if (now === last) return now;
    if (Date.now() > deadline) throw new Error(`still changing after ${timeoutMs} ms (${last} -> ${now})`);
    last = now;
  }
}

// Reading streamed answers, and waiting for what the service does in its own time.

/** Reads an NDJSON stream response until it ends or `until` says stop; returns the parsed lines. */
export async function readNdjson(res: Response, until?: (line: any, all: any[]) => boolean): Promise<any[]> {
  const lines: any[] = [];
  const reader = res.body!.getReader();
  let pending = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
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
  for (const deadline = Date.now() + timeoutMs; !(await check()); await sleep(20)) {
    if (Date.now() > deadline) throw new Error(`not so after ${timeoutMs} ms: ${check.toString()}`);
  }
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

// Which replicas of a pool are up: each checked at /readyz every second (when there are several),
// and left out at once when a call's connection to it fails, until a check finds it ready again.

const CHECK_MS = 1_000;

export interface ReplicaMembers {
  readonly urls: readonly string[];
  /** The replica the next call goes to: round-robin over those up, or over all when none is. */
  pick(): string;
  /** Leaves a replica out until its next successful readiness check. */
  markDown(url: string): void;
  /** Checks one replica now; whether it counts as up. */
  check(url: string): Promise<boolean>;
  close(): void;
}

export function createReplicaMembers(urls: readonly string[]): ReplicaMembers {
  const up = new Set(urls);
  let next = 0;
  async function check(url: string): Promise<boolean> {
    const ok = await fetch(new URL("/readyz", url), { signal: AbortSignal.timeout(2_000) }).then(
      (res) => res.ok,
      // A check that timed out is a slow replica (a loaded machine), not a dead one: it keeps its turn.
      (err: unknown) => ((err as Error).name === "TimeoutError" ? undefined : false),
    );
    if (ok === true) up.add(url);
    else if (ok === false) up.delete(url);
    return ok ?? up.has(url);
  }
  // One replica needs no checks: it gets every call whatever its state.
  const timer = urls.length > 1 ? setInterval(() => void Promise.all(urls.map(check)), CHECK_MS) : undefined;
  timer?.unref();
  return {
    urls,
    pick() {
      const candidates = urls.filter((u) => up.has(u));
      const from = candidates.length > 0 ? candidates : urls;
      return from[next++ % from.length]!;
    },
    markDown(url) {
      if (urls.length > 1) up.delete(url);
    },
    check,
    close() {
      clearInterval(timer);
    },
  };
}

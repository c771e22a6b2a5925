// The replicas of one part in other processes (AIEM_<PART>_URL may list several, comma-separated).
// Calls go round-robin to the replicas that answered their last readiness check; a replica whose
// connection fails is left out at once, until a check finds it ready again, so a killed
// replica costs the calls already sent to it, not the ones after. The replicas share their work
// through PostgreSQL and NATS, and forward calls about work pinned to another one themselves.
import type { DescMessage, DescMethodStreaming, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type StreamResponse,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { traceContextInterceptor } from "@aiem/kit/observability";

export interface ReplicaPool {
  readonly urls: readonly string[];
  /** The replica the next call goes to. */
  pick(): string;
  /** Leaves a replica out until its next successful readiness check. */
  markDown(url: string): void;
  /** Any replica ready now (checked on the spot). */
  ready(): Promise<boolean>;
  /** A transport spreading calls over the replicas. */
  readonly transport: Transport;
  close(): void;
}

const CHECK_MS = 1_000;

/** Whether a call failed on its connection with one of `codes` (ECONNREFUSED: nothing listened). */
function connectionFailed(err: unknown, codes: readonly string[]): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && codes.includes(code)) return true;
  }
  return false;
}

/** `list` is one URL or several, comma-separated. */
export function createReplicaPool(list: string): ReplicaPool {
  const urls = list
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");
  if (urls.length === 0) throw new Error("a replica pool needs at least one URL");
  const up = new Set(urls);
  // Replicas are on the same network: compressing would only burn CPU on both ends (issue 15).
  // Each call carries the span it is made in, so the replica's span continues this one.
  const transports = new Map(
    urls.map((url) => [
      url,
      createGrpcTransport({ baseUrl: url, acceptCompression: [], interceptors: [traceContextInterceptor] }),
    ]),
  );
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

  // One replica needs no checks: it gets every call whatever its state, as before there were pools.
  const timer = urls.length > 1 ? setInterval(() => void Promise.all(urls.map(check)), CHECK_MS) : undefined;
  timer?.unref();

  function pick(): string {
    const candidates = urls.filter((u) => up.has(u));
    const from = candidates.length > 0 ? candidates : urls;
    return from[next++ % from.length]!;
  }

  const markDown = (url: string) => {
    if (urls.length > 1) up.delete(url);
  };

  function noting<T>(url: string, call: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    return call.catch((err: unknown) => {
      // Only the connection: an UNAVAILABLE the replica answered itself (its database restarting,
      // a sandbox's replica down) says nothing about this replica.
      if (connectionFailed(err, ["ECONNREFUSED", "ECONNRESET"])) markDown(url);
      // A stream cancelled that the caller did not cancel: the replica's connection ended under
      // the call (the replica killed). Whether the call took effect is unknown, which is
      // UNAVAILABLE to the client, not CANCELED (which says the client gave up and nothing more).
      if (err instanceof ConnectError && err.code === Code.Canceled && signal?.aborted !== true) {
        markDown(url);
        throw new ConnectError(
          "the service's replica went away during the call, which may or may not have taken effect; retry shortly",
          Code.Unavailable,
          undefined,
          undefined,
          err,
        );
      }
      throw err;
    });
  }

  const transport: Transport = {
    unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: Parameters<Transport["unary"]>[3],
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      // A replica that refused the connection never saw the call: the next one may take it.
      const attempt = async (left: number): Promise<UnaryResponse<I, O>> => {
        const url = pick();
        try {
          return await noting(
            url,
            transports.get(url)!.unary(method, signal, timeoutMs, header, input, contextValues),
            signal,
          );
        } catch (err) {
          if (left > 1 && connectionFailed(err, ["ECONNREFUSED"])) return attempt(left - 1);
          throw err;
        }
      };
      return attempt(urls.length);
    },
    stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: Parameters<Transport["unary"]>[3],
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      const url = pick();
      return noting(url, transports.get(url)!.stream(method, signal, timeoutMs, header, input, contextValues), signal);
    },
  };

  return {
    urls,
    pick,
    markDown,
    async ready() {
      const results = await Promise.all(urls.map(check));
      return results.some(Boolean);
    },
    transport,
    close() {
      clearInterval(timer);
    },
  };
}

// The replicas of one part in other processes (AIEM_<PART>_URL may list several, comma-separated).
// Calls go round-robin to the replicas that answered their last readiness check; a replica whose
// connection fails is left out at once, until a check finds it ready again, so a killed
// replica costs the calls already sent to it, not the ones after. The replicas share their work
// through PostgreSQL and NATS, and forward calls about work pinned to another one themselves.
import type { Transport } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { traceContextInterceptor } from "@aiem/kit/observability";
import { createReplicaMembers } from "./replica-members.js";
import { createPoolTransport } from "./replica-transport.js";

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

/** `list` is one URL or several, comma-separated. */
export function createReplicaPool(list: string): ReplicaPool {
  const urls = list
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");
  if (urls.length === 0) throw new Error("a replica pool needs at least one URL");
  const members = createReplicaMembers(urls);
  // Replicas are on the same network: compressing would only burn CPU on both ends.
  // Each call carries the span it is made in, so the replica's span continues this one.
  const transports = new Map(
    urls.map((url) => [
      url,
      createGrpcTransport({ baseUrl: url, acceptCompression: [], interceptors: [traceContextInterceptor] }),
    ]),
  );
  return {
    urls,
    pick: members.pick,
    markDown: members.markDown,
    async ready() {
      const results = await Promise.all(urls.map(members.check));
      return results.some(Boolean);
    },
    transport: createPoolTransport(members, transports),
    close: members.close,
  };
}

// A transport over the replicas of a pool: each call to the replica picked for it, a unary call
// refused at the connection retried on the next replica (it never reached the first), and a
// replica whose connection failed left out of the round.
import type { DescMessage, DescMethodStreaming, DescMethodUnary, MessageInitShape } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  type StreamResponse,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import type { ReplicaMembers } from "./replica-members.js";

/** Whether a call failed on its connection with one of `codes` (ECONNREFUSED: nothing listened). */
function connectionFailed(err: unknown, codes: readonly string[]): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === "string" && codes.includes(code)) return true;
  }
  return false;
}

function noting<T>(
  members: ReplicaMembers,
  url: string,
  call: Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  return call.catch((err: unknown) => {
    // Only the connection: an UNAVAILABLE the replica answered itself (its database restarting,
    // a sandbox's replica down) says nothing about this replica.
    if (connectionFailed(err, ["ECONNREFUSED", "ECONNRESET"])) members.markDown(url);
    // A stream cancelled that the caller did not cancel: the replica's connection ended under
    // the call (the replica killed). Whether the call took effect is unknown, which is
    // UNAVAILABLE to the client, not CANCELED (which says the client gave up and nothing more).
    if (err instanceof ConnectError && err.code === Code.Canceled && signal?.aborted !== true) {
      members.markDown(url);
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

export function createPoolTransport(members: ReplicaMembers, transports: ReadonlyMap<string, Transport>): Transport {
  return {
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
        const url = members.pick();
        try {
          return await noting(
            members,
            url,
            transports.get(url)!.unary(method, signal, timeoutMs, header, input, contextValues),
            signal,
          );
        } catch (err) {
          if (left > 1 && connectionFailed(err, ["ECONNREFUSED"])) return attempt(left - 1);
          throw err;
        }
      };
      return attempt(members.urls.length);
    },
    stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: Parameters<Transport["unary"]>[3],
      input: AsyncIterable<MessageInitShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      const url = members.pick();
      return noting(
        members,
        url,
        transports.get(url)!.stream(method, signal, timeoutMs, header, input, contextValues),
        signal,
      );
    },
  };
}

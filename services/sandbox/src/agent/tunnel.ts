// One forwarded TCP connection to a port on the sandbox's loopback interface (see
// AgentService.Tunnel). The agent lives in the sandbox's network namespace, so `127.0.0.1` here
// is the sandbox's own loopback and sandboxes never compete for host ports.
import * as net from "node:net";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { TunnelRequest, TunnelResponseSchema } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";

type TunnelResponseInit = MessageInitShape<typeof TunnelResponseSchema>;

function connectionError(error: unknown): ConnectError {
  const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "error";
  return new ConnectError(`connection failed: ${code}`, Code.Unavailable);
}

export async function* tunnel(
  requests: AsyncIterable<TunnelRequest>,
  context: HandlerContext,
): AsyncGenerator<TunnelResponseInit> {
  const input = requests[Symbol.asyncIterator]();
  const first = await input.next();
  if (first.done || first.value.frame.case !== "open") {
    throw new ConnectError("the first tunnel message must be open", Code.InvalidArgument);
  }
  const port = first.value.frame.value.port;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ConnectError("open.port: must be between 1 and 65535", Code.InvalidArgument);
  }

  const socket = net.connect({ host: "127.0.0.1", port, allowHalfOpen: true });
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", (error) =>
      reject(
        new ConnectError(
          `nothing accepts connections on port ${port}: ${String((error as { code?: string }).code ?? error)}`,
          Code.Unavailable,
        ),
      ),
    );
  });

  // Incoming bytes wait here until the response stream takes them; pausing the socket while
  // the queue is long passes the client's slowness back to the program in the sandbox.
  const queue: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let failure: ConnectError | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  socket.on("data", (data: Buffer) => {
    queue.push(data);
    queued += data.length;
    if (queued > 1 << 20) socket.pause();
    notify();
  });
  socket.on("end", () => {
    ended = true;
    notify();
  });
  socket.on("error", (error) => {
    failure ??= connectionError(error);
    notify();
  });
  socket.on("close", () => {
    ended = true;
    notify();
  });
  const onAbort = () => {
    socket.resetAndDestroy();
    notify();
  };
  context.signal.addEventListener("abort", onAbort, { once: true });

  // Client to program: runs beside the response loop; the end of the request stream half-closes.
  const pump = (async () => {
    try {
      for (;;) {
        const next = await input.next();
        if (next.done) break;
        if (next.value.frame.case !== "data") {
          throw new ConnectError("after open, tunnel messages must carry data", Code.InvalidArgument);
        }
        if (socket.destroyed) break;
        if (!socket.write(next.value.frame.value)) {
          await new Promise<void>((resolve) => {
            socket.once("drain", resolve);
            socket.once("close", resolve);
          });
        }
      }
      if (!socket.destroyed) socket.end();
    } catch (error) {
      failure ??= error instanceof ConnectError ? error : connectionError(error);
      socket.destroy();
      notify();
    }
  })();

  try {
    yield { frame: { case: "opened", value: {} } };
    for (;;) {
      if (failure) throw failure;
      if (queue.length > 0) {
        const data = queue.length === 1 ? queue[0]! : Buffer.concat(queue);
        queue.length = 0;
        queued = 0;
        if (socket.isPaused()) socket.resume();
        yield { frame: { case: "data", value: data } };
        continue;
      }
      if (ended || context.signal.aborted) break;
      await new Promise<void>((resolve) => (wake = resolve));
    }
    if (failure) throw failure;
  } finally {
    context.signal.removeEventListener("abort", onAbort);
    if (!socket.destroyed) socket.destroy();
    void pump;
  }
}

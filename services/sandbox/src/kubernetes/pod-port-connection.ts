// A connection to a port of a sandbox's pod, at the pod's IP: what the agent's tunnel is for the
// local runtime, here the cluster's network (every pod reaches every pod's IP), so the port proxy
// forwards HTTP and upgrades to pods exactly as it does through a tunnel.
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";

/** How long a connection may take to open: an address nobody answers would otherwise hang for minutes. */
const connectTimeoutMs = 10_000;

/**
 * Opens a TCP connection to `host:port`. Ending its writable side half-closes it; destroying it
 * resets it. Fails (UNAVAILABLE) when nothing accepts connections there.
 */
export function connectPodPort(host: string, port: number, options: { signal?: AbortSignal } = {}): Promise<Duplex> {
  const { signal } = options;
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, allowHalfOpen: true });
    const onAbort = () => socket.destroy();
    signal?.addEventListener("abort", onAbort, { once: true });
    socket.setTimeout(connectTimeoutMs, () =>
      socket.destroy(new Error(`no answer from ${host}:${port} in ${connectTimeoutMs} ms`)),
    );
    socket.once("error", (error) => {
      signal?.removeEventListener("abort", onAbort);
      reject(
        new ConnectError(
          `nothing accepts connections on port ${port} of the sandbox's pod: ${error.message}`,
          Code.Unavailable,
        ),
      );
    });
    socket.once("connect", () => {
      socket.setTimeout(0);
      socket.removeAllListeners("timeout");
      resolve(socket);
    });
  });
}

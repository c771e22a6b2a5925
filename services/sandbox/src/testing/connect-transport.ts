// Connect calls to the harness's real server as a test user, for the suites that speak the Connect
// protocol over HTTP rather than REST.
import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { SandboxHarness } from "./sandbox-harness.js";

/** Sends `token` as the bearer of every call. */
export function bearer(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${token}`);
    return next(req);
  };
}

/** A Connect transport to the harness's server over HTTP `httpVersion`, calling as `user`. */
export async function connectTransport(h: SandboxHarness, user: string, httpVersion: "1.1" | "2"): Promise<Transport> {
  return createConnectTransport({ baseUrl: h.t.url, httpVersion, interceptors: [bearer(await h.token(user))] });
}

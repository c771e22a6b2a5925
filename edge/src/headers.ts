// Which headers cross the edge. Application headers (Authorization, X-Request-Id, ...) pass
// both ways; headers that belong to one hop or to one protocol's framing stay behind, because
// the call on the other side is a different HTTP exchange, often in a different protocol.

const hopHeaders = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "host",
  "http2-settings",
  "content-type",
  "content-length",
  "content-encoding",
  "accept",
  "accept-encoding",
  "origin",
  "cookie",
  "set-cookie",
  "date",
  "vary",
  "x-grpc-web",
  "x-user-agent",
]);

/** True for headers that belong to the transport or framing, not to the application. */
export function isProtocolHeader(lowerName: string): boolean {
  return (
    hopHeaders.has(lowerName) ||
    lowerName.startsWith(":") ||
    lowerName.startsWith("connect-") ||
    lowerName.startsWith("grpc-") ||
    lowerName.startsWith("access-control-")
  );
}

/** Application headers of an incoming Node request, for the call the edge makes. */
export function forwardedRequestHeaders(incoming: Readonly<Record<string, string | string[] | undefined>>): Headers {
  const out = new Headers();
  for (const name in incoming) {
    if (isProtocolHeader(name)) continue;
    const value = incoming[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else out.set(name, value);
  }
  return out;
}

/** Copies the application headers of `from` into `to`. */
export function copyApplicationHeaders(from: Headers, to: Headers): void {
  from.forEach((value, name) => {
    if (!isProtocolHeader(name)) to.append(name, value);
  });
}

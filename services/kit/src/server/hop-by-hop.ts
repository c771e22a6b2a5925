// Headers that describe one connection rather than the message (RFC 9110 §7.6.1, HTTP/1's
// keep-alive and proxy-connection, h2c's HTTP2-Settings): whatever relays a request or an answer
// drops them and lets its own connection set them.

/** The hop-by-hop header names, lower case. */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "http2-settings",
]);

/**
 * True for a header a relay drops. With `keepUpgrade` (relaying a WebSocket handshake) Upgrade and
 * Connection go along: the far end must see the request to switch protocols.
 */
export function isHopByHop(name: string, keepUpgrade = false): boolean {
  return HOP_BY_HOP_HEADERS.has(name) && !(keepUpgrade && (name === "upgrade" || name === "connection"));
}

import { readUrl, type Env } from "./env.js";

/**
 * AIEM_PUBLIC_URL without trailing slashes: where clients reach the edge (behind a proxy, the
 * proxy's address). Engine URLs, port URLs and the embedded token issuer are built on it.
 */
export function readPublicUrl(env: Env = process.env): string | undefined {
  return readUrl(env, "AIEM_PUBLIC_URL", { optional: true, protocols: ["http", "https"] })?.replace(/\/+$/, "");
}

/**
 * The public URL when AIEM_PUBLIC_URL is unset: `http://host:port` of the listener, with a
 * wildcard address (0.0.0.0, ::) shown as loopback, since clients cannot connect to a wildcard.
 */
export function defaultPublicUrl(host: string, port: number): string {
  const shown =
    host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

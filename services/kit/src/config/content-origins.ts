// User content (engine UIs, sandbox ports) is served at origins of its own, under a base domain
// that is never the API's: `{uid}.engines.<base>` and `{port}-{uid}.sandboxes.<base>` (public
// ports at `{port}-{uid}.public.<base>`). A page one engine or sandbox serves then has no rights
// over the API's origin, the docs site's storage, or another engine's pages.
import { ConfigError, readBool, readUrl, type Env } from "./env.js";

/** AIEM_CONTENT_URL and AIEM_PATH_URLS, as every part reads them. */
export interface ContentSettings {
  /**
   * AIEM_CONTENT_URL: scheme, base domain and port of the user-content origins, e.g.
   * `https://aiem-content.example.com`. Unset: `localhost` with the public URL's scheme and port
   * (browsers resolve `*.localhost` to loopback).
   */
  readonly contentUrl?: string | undefined;
  /**
   * AIEM_PATH_URLS: also serve, and hand out, the old path URLs on the API's origin
   * (`/engines/{uid}/`, `/sandboxes/{uid}/ports/{port}/`); user content then shares the API's
   * origin. Off unless set.
   */
  readonly pathUrls?: boolean | undefined;
}

export function readContentEnv(env: Env): { contentUrl: string | undefined; pathUrls: boolean } {
  const contentUrl = readUrl(env, "AIEM_CONTENT_URL", { optional: true, protocols: ["http", "https"] });
  if (contentUrl !== undefined) {
    const url = new URL(contentUrl);
    if (url.pathname !== "/" || url.search !== "" || url.hash !== "") {
      throw new ConfigError(
        "AIEM_CONTENT_URL",
        "must be a scheme, domain and optional port only, e.g. https://aiem-content.example.com",
      );
    }
    if (/^[0-9.]+$/.test(url.hostname) || url.hostname.startsWith("[")) {
      throw new ConfigError(
        "AIEM_CONTENT_URL",
        "must name a domain (its subdomains are the content origins), not an IP address",
      );
    }
  }
  return { contentUrl: contentUrl?.replace(/\/+$/, ""), pathUrls: readBool(env, "AIEM_PATH_URLS", { default: false }) };
}

/** The content base when AIEM_CONTENT_URL is unset: `localhost` with the public URL's scheme and port. */
export function defaultContentUrl(publicUrl: string): string {
  const url = new URL(publicUrl);
  return `${url.protocol}//localhost${url.port ? `:${url.port}` : ""}`;
}

/** What a content host names. */
export type ContentTarget =
  | { readonly kind: "engine"; readonly uid: string }
  | { readonly kind: "port"; readonly uid: string; readonly port: number; readonly public: boolean };

const UID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const ENGINE_LABEL = new RegExp(`^(${UID})\\.engines$`);
const PORT_LABEL = new RegExp(`^([0-9]{1,5})-(${UID})\\.(sandboxes|public)$`);

/**
 * The content origin a Host header (or HTTP/2 :authority) names under `domain`, or undefined for
 * any other host (the API's). The port is ignored: a proxy in front may change it.
 */
export function parseContentHost(host: string | undefined, domain: string): ContentTarget | undefined {
  if (!host) return undefined;
  const name = host
    .toLowerCase()
    .replace(/:[0-9]+$/, "")
    .replace(/\.$/, "");
  const suffix = `.${domain.toLowerCase()}`;
  if (!name.endsWith(suffix)) return undefined;
  const label = name.slice(0, -suffix.length);
  const engine = ENGINE_LABEL.exec(label);
  if (engine) return { kind: "engine", uid: engine[1]! };
  const port = PORT_LABEL.exec(label);
  if (!port) return undefined;
  const number = Number(port[1]);
  if (number < 1 || number > 65535) return undefined;
  return { kind: "port", uid: port[2]!, port: number, public: port[3] === "public" };
}

/** The URLs handed out for user content. */
export interface ContentUrls {
  /** An engine's web UI: its own origin, under the engine's context path `/engines/{uid}/`. */
  engine(uid: string): string;
  /** A sandbox port, reached with the sandbox creator's credentials. */
  port(uid: string, port: number): string;
  /** A sandbox port's public URL, open to anyone while the port is public. */
  publicPort(uid: string, port: number): string;
}

/**
 * Builds content URLs on the content base (AIEM_CONTENT_URL or its default), or, with
 * AIEM_PATH_URLS, on the public URL's paths. Read each time: the port may be known late.
 */
export function createContentUrls(settings: ContentSettings, publicUrl: () => string): ContentUrls {
  const origin = (label: string) => {
    const base = new URL(settings.contentUrl ?? defaultContentUrl(publicUrl()));
    return `${base.protocol}//${label}.${base.host}`;
  };
  if (settings.pathUrls) {
    return {
      engine: (uid) => `${publicUrl()}/engines/${uid}/`,
      port: (uid, port) => `${publicUrl()}/sandboxes/${uid}/ports/${port}/`,
      publicPort: (uid, port) => `${publicUrl()}/sandboxes/${uid}/public/${port}/`,
    };
  }
  return {
    engine: (uid) => `${origin(`${uid}.engines`)}/engines/${uid}/`,
    port: (uid, port) => `${origin(`${port}-${uid}.sandboxes`)}/`,
    publicPort: (uid, port) => `${origin(`${port}-${uid}.public`)}/`,
  };
}

/** The domain the edge matches content hosts against. */
export function contentDomain(settings: ContentSettings, publicUrl: string): string {
  return new URL(settings.contentUrl ?? defaultContentUrl(publicUrl)).hostname;
}

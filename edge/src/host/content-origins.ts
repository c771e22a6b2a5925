// The edge in front of user content: a request whose Host names a content origin
// (`{uid}.engines.<base>`, `{port}-{uid}.sandboxes.<base>`, `{port}-{uid}.public.<base>`) goes to
// that engine's or port's route and nowhere else, so a page served there can reach neither the
// API, the docs site, nor another engine or port at its own origin. The API's origin in turn
// serves no user content to browsers, and reads no cookie outside the path routes:
// - `/sandboxes/` (ports) only with AIEM_PATH_URLS;
// - `/engines/` and `/workspaces/` (DAI and H2O engines by name) only with AIEM_PATH_URLS, or to a
//   request with an Authorization header and no `?token=` (its cookies dropped), which a browser
//   never sends when it navigates: `api_url` stays usable by programs, and no engine page ever
//   runs as a document of the API's origin.
import { STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { ENGINE_ORIGIN_HEADER } from "@aiem/engine";
import {
  openTicket,
  parseContentHost,
  TICKET_PARAM,
  type ContentTarget,
  type createTicketLedger,
} from "@aiem/kit/config";
import { FORWARDED_HEADER, type HttpRoute } from "@aiem/kit/server";
import { CONTENT_ORIGIN_HEADER } from "@aiem/sandbox";
import type { NodeHandler, NodeRequest, NodeResponse } from "../transcoder/transcoder.js";

// The edge, and only it, marks requests that came to a port's origin (CONTENT_ORIGIN_HEADER: the
// port route then adds no path prefix) or to an engine's (ENGINE_ORIGIN_HEADER: the engine route
// serves that engine only); it strips both from every incoming request.

export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface ContentOriginOptions {
  /** The base domain of the content origins (AIEM_CONTENT_URL's host, `localhost` by default). */
  readonly domain: () => string;
  /** AIEM_PATH_URLS: the path routes stay open on the API's origin. */
  readonly pathUrls: boolean;
  /** The routes by prefix (`/engines/`, `/workspaces/`, `/sandboxes/`), local or proxied to another process. */
  readonly routes: readonly HttpRoute[];
  /** Opens the tickets on handed-out URLs (content-ticket.ts); known once the host started. */
  readonly tickets?: {
    readonly key: () => Uint8Array | undefined;
    readonly ledger: ReturnType<typeof createTicketLedger>;
  };
}

const CONTENT_PREFIXES = ["/engines/", "/workspaces/", "/sandboxes/"];
const PROGRAMMATIC_PREFIXES = ["/engines/", "/workspaces/"];

type Decision =
  | { readonly kind: "route"; readonly route: HttpRoute }
  | { readonly kind: "api"; readonly programmatic?: boolean }
  | { readonly kind: "answer"; readonly status: number; readonly message: string; readonly location?: string }
  | { readonly kind: "exchange"; readonly target: ContentTarget; readonly ticket: string; readonly rest: string };

function hostOf(req: NodeRequest | IncomingMessage): string | undefined {
  return (req.headers[":authority"] as string | undefined) ?? req.headers.host;
}

function routeFor(routes: readonly HttpRoute[], path: string): HttpRoute | undefined {
  return routes.find((r) => !r.upgradeOnly && path.startsWith(r.prefix));
}

/** The first route under whose prefix `path` lies that takes upgrades. */
function upgradeRouteFor(routes: readonly HttpRoute[], path: string): HttpRoute | undefined {
  return routes.find((r) => r.upgrade !== undefined && path.startsWith(r.prefix));
}

/**
 * Where a request goes, rewriting its URL for a port's origin. Exported for the unit test; the
 * handlers below apply it.
 */
export function decide(options: ContentOriginOptions, req: NodeRequest | IncomingMessage): Decision {
  // Only the edge says a request came from a content origin.
  delete req.headers[CONTENT_ORIGIN_HEADER];
  delete req.headers[ENGINE_ORIGIN_HEADER];
  const target = parseContentHost(hostOf(req), options.domain());
  const url = req.url ?? "/";
  if (target) return decideContent(options, req, target, url);
  if (!CONTENT_PREFIXES.some((p) => url.startsWith(p))) {
    // The API and the docs read no cookie; one a content page set for a parent domain
    // (`Domain=localhost`, where the browser takes it) stops here.
    delete req.headers.cookie;
    return { kind: "api" };
  }
  if (options.pathUrls) return { kind: "api" };
  const programmatic = PROGRAMMATIC_PREFIXES.some((p) => url.startsWith(p));
  const query = new URL(url, "http://api").searchParams;
  if (programmatic && req.headers.authorization && !query.has("token")) {
    // Programs' HTTP sessions may keep a cookie an engine set; the bearer alone counts here.
    delete req.headers.cookie;
    return { kind: "api", programmatic };
  }
  return {
    kind: "answer",
    status: 404,
    message: programmatic
      ? "engine pages are served at their own origin (the engine's login_url); this origin answers engine paths only to an Authorization header"
      : "sandbox ports are served at their own origin (the port's internal_url or public_url)",
  };
}

function decideContent(
  options: ContentOriginOptions,
  req: NodeRequest | IncomingMessage,
  target: ContentTarget,
  url: string,
): Decision {
  const parsed = new URL(url, "http://content");
  const ticket = parsed.searchParams.get(TICKET_PARAM);
  if (ticket !== null) {
    parsed.searchParams.delete(TICKET_PARAM);
    return { kind: "exchange", target, ticket, rest: `${parsed.pathname}${parsed.search}` };
  }
  if (target.kind === "engine") {
    // The engine keeps its context path `/engines/{uid}/` at its origin; nothing else is there
    // but its path by name (`/workspaces/{ws}/{daiEngines,h2oEngines}/{id}/`, where its
    // login_url lies), which the engine route serves only when the name is this engine's.
    const base = `/engines/${target.uid}`;
    if (url === "/" || url.startsWith("/?"))
      return { kind: "answer", status: 302, message: "", location: `${base}/${url.slice(1)}` };
    const byName = /^\/workspaces\/[^/?]+\/(daiEngines|h2oEngines)\/[^/?]+(\/|$)/.test(url);
    if (!byName && url !== base && !url.startsWith(`${base}/`) && !url.startsWith(`${base}?`)) {
      return { kind: "answer", status: 404, message: `this origin serves only ${base}/` };
    }
    req.headers[ENGINE_ORIGIN_HEADER] = target.uid;
    const route = routeFor(options.routes, url);
    return route
      ? { kind: "route", route }
      : { kind: "answer", status: 503, message: "the engine service is not served here" };
  }
  const own = `/sandboxes/${target.uid}/${target.public ? "public" : "ports"}/${target.port}`;
  // A replica that took the request at this origin sends it on to the sandbox's replica with the
  // path it rewrote it to (forwarding.ts in the server kit): that path of this very port stays.
  const rewritten =
    req.headers[FORWARDED_HEADER] !== undefined && (url.startsWith(`${own}/`) || url.startsWith(`${own}?`));
  req.url = rewritten ? url : `${own}${url.startsWith("/") ? url : `/${url}`}`;
  req.headers[CONTENT_ORIGIN_HEADER] = "1";
  const route = routeFor(options.routes, req.url);
  return route
    ? { kind: "route", route }
    : { kind: "answer", status: 503, message: "the sandbox service is not served here" };
}

/** The edge's HTTP handler: content origins to their routes, everything else to `api`. */
export function createContentOriginHandler(options: ContentOriginOptions, api: NodeHandler): NodeHandler {
  return (req, res) => {
    const decision = decide(options, req);
    if (decision.kind === "api") {
      if (decision.programmatic) {
        // Should a page come back anyway, it runs with no origin of ours.
        res.setHeader("content-security-policy", "sandbox");
        res.setHeader("x-content-type-options", "nosniff");
      }
      return api(req, res);
    }
    if (decision.kind === "route") return decision.route.handler(req, res as Parameters<HttpRoute["handler"]>[1]);
    if (decision.kind === "exchange") return exchange(options, req, res, decision);
    answer(res, decision);
  };
}

/**
 * A ticket for this origin, unused and in time, stands for the token it carries once: the request
 * goes on to the origin's route as `?token=`, which that route trades for a session of this
 * origin alone (a host-only `__Host-` cookie, never the token) and a redirect to the URL
 * without it.
 */
function exchange(
  options: ContentOriginOptions,
  req: NodeRequest,
  res: NodeResponse,
  decision: Extract<Decision, { kind: "exchange" }>,
): void {
  const key = options.tickets?.key();
  const host = hostOf(req) ?? "";
  const opened = key ? openTicket(key, decision.ticket, host) : { refused: "tickets are not open yet" };
  if ("refused" in opened || !options.tickets!.ledger.take(opened)) {
    const why = "refused" in opened ? opened.refused : "the ticket was used already";
    res.writeHead(401, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(
      JSON.stringify({
        code: 16,
        message: `${why}: ask the API for the URL again, or send Authorization: Bearer`,
        details: [],
      }),
    );
    return;
  }
  const url = new URL(decision.rest, "http://content");
  url.searchParams.set("token", opened.token);
  req.url = `${url.pathname}${url.search}`;
  // A bearer header would win over the ticket's token, and no session would be made.
  delete req.headers.authorization;
  const next = decide(options, req);
  if (next.kind === "route") {
    next.route.handler(req, res as Parameters<HttpRoute["handler"]>[1]);
    return;
  }
  // The ticket is gone from the URL, and the host is the content origin's: nothing else is left.
  answer(res, next.kind === "answer" ? next : { kind: "answer", status: 404, message: "not found" });
}

/** The edge's `upgrade` handler (WebSockets), with the same decisions. */
export function createContentOriginUpgrade(options: ContentOriginOptions): UpgradeHandler {
  return (req, socket, head) => {
    const decision = decide(options, req);
    // A ticket is exchanged by a page load, never by a WebSocket.
    const route =
      decision.kind === "route"
        ? decision.route
        : decision.kind === "api"
          ? upgradeRouteFor(options.routes, req.url ?? "/")
          : undefined;
    if (route?.upgrade) return route.upgrade(req, socket, head);
    const status = decision.kind === "answer" ? decision.status : 404;
    const body = JSON.stringify({
      code: 5,
      message: decision.kind === "answer" ? decision.message : "not found",
      details: [],
    });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Error"}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
}

function answer(res: NodeResponse, decision: Extract<Decision, { kind: "answer" }>): void {
  if (decision.location !== undefined) {
    res.writeHead(decision.status, { location: decision.location });
    res.end();
    return;
  }
  res.writeHead(decision.status, { "content-type": "application/json" });
  res.end(JSON.stringify({ code: decision.status === 404 ? 5 : 14, message: decision.message, details: [] }));
}

/** The `upgrade` handler of a part behind the edge: by path prefix alone. */
export function createPathUpgrade(routes: readonly HttpRoute[]): UpgradeHandler {
  return (req, socket, head) => {
    const route = upgradeRouteFor(routes, req.url ?? "/");
    if (route?.upgrade) route.upgrade(req, socket, head);
    else socket.destroy();
  };
}

// Serves the built docs site (web/dist) under its base path for node:http, with no framework.
// Hashed assets are cached for a year as immutable; HTML must be revalidated, so a deploy shows
// at once. Known routes get the app's index.html; any other path gets the same app with a real
// 404 status, and the app renders its not-found page.
import { createReadStream, existsSync, readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";

export interface DocsHandlerOptions {
  /** The build output, containing index.html and routes.json. */
  distDir: string;
  /** Default "/ai-engine-manager/". */
  basePath?: string;
}

/** Handles a request when its path is under the base path and returns true; otherwise returns false and writes nothing. */
export type DocsHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".yaml": "application/yaml; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
  ".webmanifest": "application/manifest+json",
};

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "no-cache";

interface FileEntry {
  path: string;
  size: number;
  etag: string;
  encodings: { br?: string; gzip?: string };
}

export function createDocsHandler(options: DocsHandlerOptions): DocsHandler {
  const base = options.basePath ?? "/ai-engine-manager/";
  const dist = normalize(options.distDir);
  const manifest = JSON.parse(readFileSync(join(dist, "routes.json"), "utf8")) as { routes: { path: string }[] };
  const routes = new Set(manifest.routes.map((r) => r.path));
  const assetsPrefix = "assets/";
  const cache = new Map<string, FileEntry | null>();

  const lookup = (relative: string): FileEntry | null => {
    if (cache.has(relative)) return cache.get(relative)!;
    const path = normalize(join(dist, relative));
    let entry: FileEntry | null = null;
    // normalize() resolves "..": anything that ends up outside the build folder does not exist.
    if ((path === dist || path.startsWith(dist + sep)) && existsSync(path) && statSync(path).isFile()) {
      const stat = statSync(path);
      entry = {
        path,
        size: stat.size,
        etag: `"${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}"`,
        encodings: {
          ...(existsSync(`${path}.br`) ? { br: `${path}.br` } : {}),
          ...(existsSync(`${path}.gz`) ? { gzip: `${path}.gz` } : {}),
        },
      };
    }
    cache.set(relative, entry);
    return entry;
  };

  const plain = (res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) => {
    res.statusCode = status;
    res.setHeader("Content-Type", "text/plain; charset=utf-8");
    res.setHeader("Cache-Control", REVALIDATE);
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    res.end(text);
  };

  const send = (req: IncomingMessage, res: ServerResponse, file: FileEntry, status: number, cacheControl: string) => {
    res.setHeader("Content-Type", contentTypes[extname(file.path)] ?? "application/octet-stream");
    res.setHeader("Cache-Control", cacheControl);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("ETag", file.etag);
    res.setHeader("Vary", "Accept-Encoding");
    if (status === 200 && req.headers["if-none-match"] === file.etag) {
      res.statusCode = 304;
      res.end();
      return;
    }
    const accepted = String(req.headers["accept-encoding"] ?? "");
    let body = file.path;
    if (file.encodings.br && /\bbr\b/.test(accepted)) {
      body = file.encodings.br;
      res.setHeader("Content-Encoding", "br");
    } else if (file.encodings.gzip && /\bgzip\b/.test(accepted)) {
      body = file.encodings.gzip;
      res.setHeader("Content-Encoding", "gzip");
    }
    // The site may be rebuilt under a running server: a file gone since the lookup is a 404,
    // never an exception out of the request handler.
    let size: number;
    try {
      size = body === file.path ? file.size : statSync(body).size;
    } catch {
      res.removeHeader("Content-Encoding");
      res.removeHeader("ETag");
      plain(res, 404, "Not Found");
      return;
    }
    res.statusCode = status;
    res.setHeader("Content-Length", size);
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    createReadStream(body)
      .on("error", () => res.destroy())
      .pipe(res);
  };

  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://docs.invalid");
    const pathname = url.pathname;
    if (pathname !== base.slice(0, -1) && !pathname.startsWith(base)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      plain(res, 405, "Method Not Allowed", { Allow: "GET, HEAD" });
      return true;
    }
    let relative: string;
    try {
      relative = decodeURIComponent(pathname.slice(base.length));
    } catch {
      plain(res, 400, "Bad Request");
      return true;
    }
    // The site root and the API reference end in a slash; their slashless forms redirect.
    if (pathname === base.slice(0, -1) || (!relative.endsWith("/") && routes.has(`${relative}/`))) {
      res.statusCode = 301;
      res.setHeader("Location", `${pathname}/${url.search}`);
      res.setHeader("Cache-Control", REVALIDATE);
      res.end();
      return true;
    }
    if (relative.endsWith("/") && relative !== "" && !routes.has(relative) && routes.has(relative.slice(0, -1))) {
      res.statusCode = 301;
      res.setHeader("Location", `${base}${relative.slice(0, -1)}${url.search}`);
      res.setHeader("Cache-Control", REVALIDATE);
      res.end();
      return true;
    }
    const index = lookup("index.html");
    if (!index) {
      plain(res, 503, "The documentation has not been built.");
      return true;
    }
    if (routes.has(relative)) {
      send(req, res, index, 200, REVALIDATE);
      return true;
    }
    const file =
      relative && !relative.endsWith("/") && !relative.split("/").some((s) => s.startsWith("."))
        ? lookup(relative)
        : null;
    if (file && !file.path.endsWith(".html")) {
      send(req, res, file, 200, relative.startsWith(assetsPrefix) ? IMMUTABLE : REVALIDATE);
      return true;
    }
    // A missing asset must not be answered with HTML, or a stale page would try to run it.
    if (relative.startsWith(assetsPrefix)) {
      plain(res, 404, "Not Found");
      return true;
    }
    send(req, res, index, 404, REVALIDATE);
    return true;
  };
}

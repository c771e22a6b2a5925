// Serves the built docs site (web/dist) under its base path for node:http, with no framework.
// Hashed assets are cached for a year as immutable; HTML must be revalidated, so a deploy shows
// at once. Known routes get the app's index.html; any other path gets the same app with a real
// 404 status, and the app renders its not-found page.
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join, normalize } from "node:path";
import { createDistFiles } from "./dist-files.js";
import { IMMUTABLE, REVALIDATE, sendFile, sendPlain } from "./send-file.js";

export interface DocsHandlerOptions {
  /** The build output, containing index.html and routes.json. */
  distDir: string;
  /** Default "/ai-engine-manager/". */
  basePath?: string;
}

/** Handles a request when its path is under the base path and returns true; otherwise returns false and writes nothing. */
export type DocsHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

export function createDocsHandler(options: DocsHandlerOptions): DocsHandler {
  const base = options.basePath ?? "/ai-engine-manager/";
  const dist = normalize(options.distDir);
  const manifest = JSON.parse(readFileSync(join(dist, "routes.json"), "utf8")) as { routes: { path: string }[] };
  const routes = new Set(manifest.routes.map((r) => r.path));
  const assetsPrefix = "assets/";
  const lookup = createDistFiles(dist);

  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://docs.invalid");
    const pathname = url.pathname;
    if (pathname !== base.slice(0, -1) && !pathname.startsWith(base)) return false;
    if (req.method !== "GET" && req.method !== "HEAD") {
      sendPlain(res, 405, "Method Not Allowed", { Allow: "GET, HEAD" });
      return true;
    }
    let relative: string;
    try {
      relative = decodeURIComponent(pathname.slice(base.length));
    } catch {
      sendPlain(res, 400, "Bad Request");
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
      sendPlain(res, 503, "The documentation has not been built.");
      return true;
    }
    if (routes.has(relative)) {
      sendFile(req, res, index, 200, REVALIDATE);
      return true;
    }
    const file =
      relative && !relative.endsWith("/") && !relative.split("/").some((s) => s.startsWith("."))
        ? lookup(relative)
        : null;
    if (file && !file.path.endsWith(".html")) {
      sendFile(req, res, file, 200, relative.startsWith(assetsPrefix) ? IMMUTABLE : REVALIDATE);
      return true;
    }
    // A missing asset must not be answered with HTML, or a stale page would try to run it.
    if (relative.startsWith(assetsPrefix)) {
      sendPlain(res, 404, "Not Found");
      return true;
    }
    sendFile(req, res, index, 404, REVALIDATE);
    return true;
  };
}

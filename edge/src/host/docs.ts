import { existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createDocsHandler } from "@aiem/web/serve";
import type { NodeHandler } from "../transcoder/transcoder.js";

export const DOCS_BASE = "/ai-engine-manager/";

/** Where `npm run build:docs` (run by `npm install`) puts the site. */
export function defaultDocsDir(): string {
  return join(dirname(createRequire(import.meta.url).resolve("@aiem/web/package.json")), "dist");
}

/**
 * Serves the docs site under /ai-engine-manager/ (and redirects `/` there); other paths go to
 * `next`. Without a build it says how to make one instead of failing the process.
 */
export function createDocsFallback(distDir: string, next: NodeHandler): NodeHandler {
  const built = existsSync(join(distDir, "routes.json"));
  const docs = built ? createDocsHandler({ distDir, basePath: DOCS_BASE }) : undefined;
  return (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/" && (req.method === "GET" || req.method === "HEAD")) {
      res.writeHead(302, { location: DOCS_BASE });
      res.end();
      return;
    }
    if (docs) {
      // The docs handler is written for node:http; HTTP/2 compatibility responses behave alike.
      if (docs(req as IncomingMessage, res as unknown as ServerResponse)) return;
    } else if (path === DOCS_BASE.slice(0, -1) || path?.startsWith(DOCS_BASE)) {
      res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "30" });
      res.end("The documentation site has not been built. Run `npm run build:docs` and restart.\n");
      return;
    }
    next(req, res);
  };
}

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { NodeHandler } from "../transcoder/transcoder.js";
import { isRead, pathOf, replyReadOnly } from "./json-reply.js";

/** Where the edge serves the REST API's OpenAPI document, and the media type of each. */
export const OPENAPI_PATHS = {
  "/openapi.json": { file: "openapi.json", type: "application/json" },
  "/openapi.yaml": { file: "openapi.yaml", type: "application/yaml" },
} as const;

type OpenApiPath = keyof typeof OPENAPI_PATHS;

/** The document `npm run gen` wrote into proto/gen/openapi. */
export function readOpenApiDocument(file: string): Buffer {
  return readFileSync(createRequire(import.meta.url).resolve(`@aiem/proto/openapi/${file}`));
}

/**
 * `GET /openapi.json` and `GET /openapi.yaml` without a token, so tools can fetch the document
 * before they have one. Other paths go to `next`.
 */
export function createOpenApiHandler(
  next: NodeHandler,
  read: (file: string) => Buffer = readOpenApiDocument,
): NodeHandler {
  const cache = new Map<string, Buffer>();
  return (req, res) => {
    const path = pathOf(req);
    if (!(path in OPENAPI_PATHS)) return next(req, res);
    if (!isRead(req)) return replyReadOnly(req, res, path);
    const { file, type } = OPENAPI_PATHS[path as OpenApiPath];
    let body = cache.get(file);
    if (!body) {
      body = read(file);
      cache.set(file, body);
    }
    res.writeHead(200, { "content-type": type, "content-length": String(body.length), "cache-control": "no-cache" });
    if (req.method === "HEAD") res.end();
    else res.end(body);
  };
}

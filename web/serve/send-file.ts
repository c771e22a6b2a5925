// The answers of the docs handler: a plain-text status, or a built file with its caching headers,
// its ETag (304 when it matches) and the best precompressed form the client accepts.
import { createReadStream, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname } from "node:path";
import type { FileEntry } from "./dist-files.js";

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

export const IMMUTABLE = "public, max-age=31536000, immutable";
export const REVALIDATE = "no-cache";

export const sendPlain = (res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) => {
  res.statusCode = status;
  res.setHeader("Content-Type", "text/plain; charset=utf-8");
  res.setHeader("Cache-Control", REVALIDATE);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(text);
};

export const sendFile = (
  req: IncomingMessage,
  res: ServerResponse,
  file: FileEntry,
  status: number,
  cacheControl: string,
) => {
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
    sendPlain(res, 404, "Not Found");
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

import { readFileSync } from "node:fs";
import type { NodeHandler } from "../transcoder/transcoder.js";
import { isRead, pathOf, replyJson, replyReadOnly } from "./json-reply.js";

/** The product's version: the root package.json's. */
export function productVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version?: unknown;
  };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}

/**
 * `GET /version` without a token: the official Python client checks that the server answers
 * there (2xx) before it builds its clients. Other paths go to `next`.
 */
export function createVersionHandler(version: string, next: NodeHandler): NodeHandler {
  return (req, res) => {
    if (pathOf(req) !== "/version") return next(req, res);
    if (!isRead(req)) return replyReadOnly(req, res, "/version");
    replyJson(req, res, 200, { version }, { "cache-control": "no-store" });
  };
}

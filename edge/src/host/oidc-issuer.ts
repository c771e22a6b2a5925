import { EMBEDDED_ISSUER_PATH, ISSUER_PATHS, type EmbeddedIssuer } from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import type { NodeHandler, NodeRequest } from "../transcoder/transcoder.js";
import { isRead, pathOf, replyJson } from "./json-reply.js";

/** Token requests are a few form fields; anything larger is not one. */
const TOKEN_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * Serves the embedded issuer under `/oidc` (its URL is `<public URL>/oidc`): the discovery
 * document, the JWKS and the token endpoint, all without a bearer token. Other paths go to `next`.
 */
export function createOidcIssuerHandler(issuer: EmbeddedIssuer, logger: Logger, next: NodeHandler): NodeHandler {
  const metadataPath = `${EMBEDDED_ISSUER_PATH}${ISSUER_PATHS.metadata}`;
  const jwksPath = `${EMBEDDED_ISSUER_PATH}${ISSUER_PATHS.jwks}`;
  const tokenPath = `${EMBEDDED_ISSUER_PATH}${ISSUER_PATHS.token}`;

  const fail = (req: NodeRequest, res: Parameters<NodeHandler>[1]) => (err: unknown) => {
    logger.error("token issuer failed", { path: pathOf(req), err });
    if (!res.headersSent)
      replyJson(
        req,
        res,
        500,
        { error: "server_error", error_description: "the token issuer failed" },
        { "cache-control": "no-store" },
      );
    else res.end();
  };

  return (req, res) => {
    const path = pathOf(req);
    if (path === metadataPath || path === jwksPath) {
      if (!isRead(req))
        return replyJson(
          req,
          res,
          405,
          { error: "invalid_request", error_description: "use GET" },
          { allow: "GET, HEAD" },
        );
      if (path === metadataPath) return replyJson(req, res, 200, issuer.metadata(), { "cache-control": "no-cache" });
      issuer
        .jwks()
        .then((jwks) => replyJson(req, res, 200, jwks, { "cache-control": "public, max-age=300" }), fail(req, res));
      return;
    }
    if (path === tokenPath) {
      if (req.method !== "POST")
        return replyJson(req, res, 405, { error: "invalid_request", error_description: "use POST" }, { allow: "POST" });
      readBody(req, TOKEN_BODY_LIMIT_BYTES)
        .then(async (body) => {
          if (body === undefined) {
            return replyJson(req, res, 413, {
              error: "invalid_request",
              error_description: `the body is larger than ${TOKEN_BODY_LIMIT_BYTES} bytes`,
            });
          }
          const answer = await issuer.token({
            contentType: header(req, "content-type"),
            body,
            authorization: header(req, "authorization"),
          });
          replyJson(req, res, answer.status, answer.body, { ...answer.headers });
        })
        .catch(fail(req, res));
      return;
    }
    next(req, res);
  };
}

function header(req: NodeRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The body as text, or undefined once it passes `limit` bytes (the rest is not read). */
async function readBody(req: NodeRequest, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > limit) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

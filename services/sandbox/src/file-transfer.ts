// Files of any size in and out of a sandbox as plain HTTP bodies, beside the JSON ReadFile and
// WriteFile (whose base64 content is bounded by the per-request body limit):
//   PUT|POST /v1/workspaces/{w}/sandboxEngines/{s}/filesystem:upload?path=...   body: the bytes
//   GET      /v1/workspaces/{w}/sandboxEngines/{s}/filesystem:download?path=... answer: the bytes
// Both stream through the agent's raw file routes (agent/file-routes.ts): the body is piped to and
// from one HTTP/2 stream on the agent's socket, the HTTP/2 windows bounding what is held, so
// memory stays a few MiB whatever the file's size. An agent from before those routes gets the
// body as WriteFileStream messages and is read a few MiB at a time through ReadFile. Errors are
// the REST API's JSON Status, with the same checks and codes as WriteFile and ReadFile.
import { create, toJson } from "@bufbuild/protobuf";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { Code, ConnectError, httpStatusOf, invalidArgument, unauthenticated, unavailable } from "@aiem/kit/errors";
import type { Authenticator, Principal } from "@aiem/kit/identity";
import type { Logger } from "@aiem/kit/logger";
import { drained, forwardHttp, ServedElsewhere, type HttpHandler, type HttpRoute } from "@aiem/kit/server";
import type { WriteFileStreamRequestSchema } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import { WriteFileResponseSchema } from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { pipeline } from "node:stream/promises";
import {
  type AccessDeps,
  agentError,
  authorizeSandboxFor,
  parentMissing,
  requireRunning,
  sandboxPath,
  viaAgent,
} from "./access.js";
import { parseMode } from "./filesystem-service.js";
import { readByMessages } from "./read-by-messages.js";

type NodeRequest = Parameters<HttpHandler>[0];
type NodeResponse = Parameters<HttpHandler>[1];

export const FILE_TRANSFER_PREFIX = "/v1/workspaces/";
const PATH = /^\/v1\/(workspaces\/[^/?#]+\/sandboxEngines\/[^/?#:]+)\/filesystem:(upload|download)$/;

/** Bytes gathered from the request before they go to the agent as one message. */
const UPLOAD_MESSAGE_BYTES = 512 << 10;

export interface FileTransferDeps extends AccessDeps {
  readonly authenticator: Authenticator;
  readonly logger: Logger;
}

// The REST API's mapping (the edge's transcoder uses the same), for the codes these routes give.

function sendError(
  res: NodeResponse,
  err: ConnectError,
  extra: Record<string, string> = {},
  status = httpStatusOf(err.code),
): void {
  if (res.headersSent) {
    // The status line is gone: cutting the body short is how the client learns of it.
    res.destroy();
    return;
  }
  const body = JSON.stringify({ code: err.code, message: err.rawMessage, details: [] });
  res.writeHead(status, {
    ...extra,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
  });
  res.end(body);
}

function flag(query: URLSearchParams, names: readonly string[], fallback: boolean): boolean {
  for (const name of names) {
    const value = query.get(name);
    if (value === null) continue;
    if (value === "true" || value === "1" || value === "") return true;
    if (value === "false" || value === "0") return false;
    throw invalidArgument(names[0]!, `must be true or false (got ${JSON.stringify(value.slice(0, 32))})`);
  }
  return fallback;
}

function pathParameter(query: URLSearchParams): string {
  const value = query.get("path") ?? "";
  if (value.includes("\0")) throw invalidArgument("path", "must not contain a NUL character");
  return sandboxPath("path", value);
}

export function createFileTransferRoute(deps: FileTransferDeps): HttpRoute {
  async function authenticate(req: NodeRequest): Promise<Principal> {
    const header = req.headers.authorization;
    try {
      return await deps.authenticator.authenticate(typeof header === "string" ? header : undefined);
    } catch {
      throw unauthenticated("missing or invalid bearer token");
    }
  }

  async function upload(
    req: NodeRequest,
    res: NodeResponse,
    name: string,
    query: URLSearchParams,
    signal: AbortSignal,
  ): Promise<void> {
    const principal = await authenticate(req);
    const call = await authorizeSandboxFor(deps, principal, name, "name", WorkspaceKind.sandboxEngines, Action.UPDATE);
    const path = pathParameter(query);
    const mode = parseMode("mode", query.get("mode") ?? "");
    // As WriteFile: an existing file is replaced unless overwrite=false.
    const overwrite = flag(query, ["overwrite"], true);
    const createParents = flag(query, ["create_parent_directories", "createParentDirectories"], false);
    const handle = requireRunning(deps, call);
    type Message = MessageInitShape<typeof WriteFileStreamRequestSchema>;
    async function* messages(): AsyncGenerator<Message> {
      yield { header: { path, createParents, overwrite, ...(mode === undefined ? {} : { mode }) } };
      let parts: Buffer[] = [];
      let size = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        parts.push(chunk);
        size += chunk.length;
        if (size >= UPLOAD_MESSAGE_BYTES) {
          yield { data: parts.length === 1 ? parts[0]! : Buffer.concat(parts, size) };
          parts = [];
          size = 0;
        }
      }
      if (size > 0) yield { data: Buffer.concat(parts, size) };
    }
    const written = await deps.lifecycle.busy(call.row.uid, () =>
      viaAgent(
        deps,
        call,
        async () =>
          (await handle.files.supported())
            ? { fileInfo: await handle.files.write(path, req, { createParents, overwrite, mode, signal }) }
            : handle.client.writeFileStream(messages(), { signal }),
        parentMissing(path),
      ),
    );
    const body = JSON.stringify(
      toJson(WriteFileResponseSchema, create(WriteFileResponseSchema, { fileInfo: written.fileInfo }), {
        alwaysEmitImplicit: true,
      }),
    );
    res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
    res.end(body);
  }

  async function download(
    req: NodeRequest,
    res: NodeResponse,
    name: string,
    query: URLSearchParams,
    signal: AbortSignal,
  ): Promise<void> {
    const principal = await authenticate(req);
    const call = await authorizeSandboxFor(deps, principal, name, "name", WorkspaceKind.sandboxEngines, Action.GET);
    const path = pathParameter(query);
    const handle = requireRunning(deps, call);
    const base = path.slice(path.lastIndexOf("/") + 1);
    const head = (size: number) =>
      res.writeHead(200, {
        "content-type": "application/octet-stream",
        "content-length": String(size),
        "content-disposition": `attachment; filename*=UTF-8''${encodeURIComponent(base)}`,
        "cache-control": "no-store",
      });
    await deps.lifecycle.busy(call.row.uid, async () => {
      if (await viaAgent(deps, call, () => handle.files.supported())) {
        const file = await viaAgent(deps, call, () => handle.files.read(path, { signal }));
        // The agent sends exactly the size the file had when it was opened, and resets the
        // stream should it shrink: a short body is cut, never passed off as the file.
        head(file.size);
        if (file.size === 0) {
          file.body.destroy();
          res.end();
          return;
        }
        try {
          await pipeline(file.body, res);
        } catch (error) {
          if (signal.aborted) return;
          throw agentError(
            deps,
            call,
            new ConnectError(`${path}: the transfer broke off: ${String(error)}`, Code.Aborted),
          );
        }
        return;
      }
      // An agent without the raw routes: the size of the first part is the Content-Length (0,
      // as the raw route, for a file that gives none), and a failure once the head is sent (a
      // file that shrank meanwhile) cuts the body short rather than passing off a partial file.
      for await (const part of readByMessages(deps, call, handle, path, signal)) {
        if (!res.headersSent) head(part.size);
        if (part.size === 0) break;
        if (part.data.length > 0 && !(res as NodeJS.WritableStream).write(part.data)) await drained(res);
        if (res.destroyed) return;
      }
      res.end();
    });
  }

  const handler: HttpHandler = (req, res) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const m = PATH.exec(q < 0 ? url : url.slice(0, q));
    const method = req.method ?? "GET";
    if (!m) {
      req.resume();
      return sendError(res, new ConnectError(`no route for ${method} ${q < 0 ? url : url.slice(0, q)}`, Code.NotFound));
    }
    const [, name, verb] = m as unknown as [string, string, "upload" | "download"];
    const allowed = verb === "upload" ? ["PUT", "POST"] : ["GET"];
    if (!allowed.includes(method)) {
      req.resume();
      return sendError(
        res,
        new ConnectError(
          `${method} is not allowed on ${url.slice(0, q < 0 ? undefined : q)}; use ${allowed.join(", ")}`,
          Code.Unimplemented,
        ),
        {
          allow: allowed.join(", "),
        },
        405,
      );
    }
    const abort = new AbortController();
    res.once("close", () => {
      if (!res.writableFinished) abort.abort(new ConnectError("the client went away", Code.Canceled));
    });
    const query = new URLSearchParams(q < 0 ? "" : url.slice(q + 1));
    const work =
      verb === "upload"
        ? upload(req, res, decodeURIComponent(name), query, abort.signal)
        : download(req, res, decodeURIComponent(name), query, abort.signal);
    work.catch(async (reason: unknown) => {
      // Checked before the body is read, so an upload goes on whole to the replica running the sandbox.
      if (reason instanceof ServedElsewhere && forwardHttp(req, res, reason.url)) return;
      if (reason instanceof ServedElsewhere) reason = unavailable(`${reason.message}; retry shortly`);
      if (!(reason instanceof ConnectError)) deps.logger.error("file transfer failed", { error: String(reason) });
      const err = reason instanceof ConnectError ? reason : new ConnectError("internal error", Code.Internal);
      // An upload refused before its body was read: the rest of the body is not waited for.
      const unread = verb === "upload" && !req.readableEnded && req.httpVersionMajor === 1;
      if (unread) req.resume();
      sendError(res, err, unread ? { connection: "close" } : {});
    });
  };

  return { prefix: FILE_TRANSFER_PREFIX, handler };
}

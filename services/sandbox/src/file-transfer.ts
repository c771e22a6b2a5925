// Files of any size in and out of a sandbox as plain HTTP bodies, beside the JSON ReadFile and
// WriteFile (whose base64 content is bounded by the per-request body limit):
//   PUT|POST /v1/workspaces/{w}/sandboxEngines/{s}/filesystem:upload?path=...   body: the bytes
//   GET      /v1/workspaces/{w}/sandboxEngines/{s}/filesystem:download?path=... answer: the bytes
// Both stream through the agent's raw file routes (agent/file-routes.ts): the body is piped to and
// from one HTTP/2 stream on the agent's socket, the HTTP/2 windows bounding what is held, so
// memory stays a few MiB whatever the file's size. An agent from before those routes gets the
// body as WriteFileStream messages and is read a few MiB at a time through ReadFile. Errors are
// the REST API's JSON Status, with the same checks and codes as WriteFile and ReadFile.
import { Action } from "@aiem/kit/authz";
import { Code, ConnectError, unavailable } from "@aiem/kit/errors";
import { forwardHttp, ServedElsewhere, type HttpHandler, type HttpRoute } from "@aiem/kit/server";
import { download } from "./file-download.js";
import { FILE_TRANSFER_PATH, type FileTransferDeps, sendError, transferTarget } from "./file-transfer-request.js";
import { upload } from "./file-upload.js";

export type { FileTransferDeps } from "./file-transfer-request.js";

export const FILE_TRANSFER_PREFIX = "/v1/workspaces/";

export function createFileTransferRoute(deps: FileTransferDeps): HttpRoute {
  const handler: HttpHandler = (req, res) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const m = FILE_TRANSFER_PATH.exec(q < 0 ? url : url.slice(0, q));
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
    const action = verb === "upload" ? Action.UPDATE : Action.GET;
    const work = transferTarget(deps, req, decodeURIComponent(name), query, action).then(({ call, path }) =>
      verb === "upload"
        ? upload(deps, req, res, call, path, query, abort.signal)
        : download(deps, res, call, path, abort.signal),
    );
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

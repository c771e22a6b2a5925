// `GET …/filesystem:download?path=`: a file of the sandbox as the answer's body, streamed from the
// agent's raw file route (or, for an agent from before it, read a few MiB at a time).
import { pipeline } from "node:stream/promises";
import { Code, ConnectError } from "@aiem/kit/errors";
import { drained } from "@aiem/kit/server";
import { agentError, requireRunning, type SandboxCall, viaAgent } from "./access.js";
import type { FileTransferDeps, NodeResponse } from "./file-transfer-request.js";
import { readByMessages } from "./read-by-messages.js";

export async function download(
  deps: FileTransferDeps,
  res: NodeResponse,
  call: SandboxCall,
  path: string,
  signal: AbortSignal,
): Promise<void> {
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

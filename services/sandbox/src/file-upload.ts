// `PUT|POST …/filesystem:upload?path=`: the request's body becomes a file in the sandbox, streamed
// to the agent's raw file route (or, for an agent from before it, as WriteFileStream messages).
import { create, type MessageInitShape, toJson } from "@bufbuild/protobuf";
import type { WriteFileStreamRequestSchema } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import { WriteFileResponseSchema } from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import { parentMissing, requireRunning, type SandboxCall, viaAgent } from "./access.js";
import { parseMode } from "./file-mode.js";
import { type FileTransferDeps, flag, type NodeRequest, type NodeResponse } from "./file-transfer-request.js";

/** Bytes gathered from the request before they go to the agent as one message. */
const UPLOAD_MESSAGE_BYTES = 512 << 10;

export async function upload(
  deps: FileTransferDeps,
  req: NodeRequest,
  res: NodeResponse,
  call: SandboxCall,
  path: string,
  query: URLSearchParams,
  signal: AbortSignal,
): Promise<void> {
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

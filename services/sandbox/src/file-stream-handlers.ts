// WriteFileStream and ReadFileStream: files of any size over Connect and gRPC, as streams of
// messages each bounded by the request-body limit (the REST routes :upload and :download carry the
// same bytes as raw HTTP bodies, file-transfer.ts). The bytes go to and from the agent's raw file
// routes as they arrive, so the service holds about one message and the HTTP/2 windows of a
// transfer, whatever the file's size; an agent from before those routes gets the internal
// WriteFileStream and ReadFile messages instead.
import type { HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { Code, ConnectError, invalidArgument } from "@aiem/kit/errors";
import { detachedBytes } from "@aiem/kit/server";
import type { WriteFileStreamRequestSchema as AgentWriteSchema } from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import type { FileInfo } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import type {
  ReadFileStreamRequest,
  ReadFileStreamResponse,
  WriteFileStreamRequest,
  WriteFileStreamResponse,
} from "@aiem/proto/enginemanager/sandbox/v1/filesystem_service_pb.js";
import {
  type AccessDeps,
  agentError,
  authorizeSandbox,
  parentMissing,
  requireRunning,
  sandboxPath,
  viaAgent,
} from "./access.js";
import { parseMode } from "./file-mode.js";
import type { FilesystemServiceImpl } from "./filesystem-handlers.js";
import { readByMessages } from "./read-by-messages.js";
import { streamChunks } from "./stream-pieces.js";

/** The most file bytes one ReadFileStream message carries: a quarter of the default request limit. */
export const READ_STREAM_MESSAGE_BYTES = 1 << 20;

type ReadMessage = Pick<ReadFileStreamResponse, "data"> & { fileInfo?: FileInfo | undefined };

export function createFileStreamHandlers(
  deps: AccessDeps,
): Pick<FilesystemServiceImpl, "writeFileStream" | "readFileStream"> {
  return {
    writeFileStream: (requests, ctx) => writeFileStream(deps, requests, ctx),
    readFileStream: (req, ctx) => readFileStream(deps, req, ctx),
  };
}

async function writeFileStream(
  deps: AccessDeps,
  requests: AsyncIterable<WriteFileStreamRequest>,
  ctx: HandlerContext,
): Promise<Partial<WriteFileStreamResponse>> {
  const messages = requests[Symbol.asyncIterator]();
  const first = await messages.next();
  const header = first.done ? undefined : first.value.header;
  if (!header) throw invalidArgument("header", "is required on the first message of the stream");
  const call = await authorizeSandbox(
    deps,
    ctx,
    header.name,
    "header.name",
    WorkspaceKind.sandboxEngines,
    Action.UPDATE,
  );
  const path = sandboxPath("header.path", header.path);
  const mode = parseMode("header.mode", header.mode);
  const handle = requireRunning(deps, call);
  // Unset overwrite means overwrite, as in WriteFile.
  const overwrite = header.overwrite ?? true;

  const content = () => fileContent(first, messages);
  type AgentMessage = MessageInitShape<typeof AgentWriteSchema>;
  async function* agentMessages(): AsyncGenerator<AgentMessage> {
    yield {
      header: {
        path,
        createParents: header!.createParentDirectories,
        overwrite,
        ...(mode === undefined ? {} : { mode }),
      },
    };
    for await (const data of content()) yield { data };
  }

  let refusal: ConnectError | undefined;
  const body = (async function* () {
    try {
      yield* content();
    } catch (error) {
      // Kept to be answered as it is: the agent only learns that the body was cancelled.
      refusal = ConnectError.from(error);
      throw error;
    }
  })();
  const written = await deps.lifecycle.busy(call.row.uid, async () => {
    try {
      return await viaAgent(
        deps,
        call,
        async () =>
          (await handle.files.supported())
            ? {
                fileInfo: await handle.files.write(path, body, {
                  createParents: header.createParentDirectories,
                  overwrite,
                  mode,
                  signal: ctx.signal,
                }),
              }
            : handle.client.writeFileStream(agentMessages(), { signal: ctx.signal }),
        parentMissing(path),
      );
    } catch (error) {
      throw refusal ?? error;
    }
  });
  return { fileInfo: written.fileInfo };
}

// The file's bytes in order. A second header is refused; a stream that breaks off or ends
// without `last` throws here, which cancels the agent's write, so no partial file is kept.
async function* fileContent(
  first: IteratorResult<WriteFileStreamRequest>,
  messages: AsyncIterator<WriteFileStreamRequest>,
): AsyncGenerator<Uint8Array> {
  const leading = first.done ? undefined : first.value.data;
  let last = !first.done && first.value.last;
  if (leading && leading.length > 0) yield leading;
  for (let next = await messages.next(); !next.done; next = await messages.next()) {
    if (last) throw invalidArgument("last", "no message may follow the one with last set");
    if (next.value.header) throw invalidArgument("header", "only the first message of the stream may carry it");
    if (next.value.data.length > 0) yield next.value.data;
    last = next.value.last;
  }
  // Node's HTTP/2 client ends its side of a stream it cancels before it resets it, so the
  // server can see a cancelled call as a body that ended: only the marker says it is whole.
  if (!last) throw invalidArgument("last", "the stream ended without a message with last set; nothing was written");
}

async function* readFileStream(
  deps: AccessDeps,
  req: ReadFileStreamRequest,
  ctx: HandlerContext,
): AsyncGenerator<ReadMessage> {
  const call = await authorizeSandbox(deps, ctx, req.name, "name", WorkspaceKind.sandboxEngines, Action.GET);
  const path = sandboxPath("path", req.path);
  const handle = requireRunning(deps, call);
  // Over binary framings each message's data is written as it is, not copied through protobuf-es.
  const detached = detachedBytes(ctx);
  const answer = (data: Uint8Array | Buffer[], fileInfo: FileInfo | undefined): ReadMessage => {
    if (detached) {
      detached.hold(data);
      return { data: new Uint8Array(0), fileInfo };
    }
    return { data: data instanceof Uint8Array ? data : data.length === 1 ? data[0]! : Buffer.concat(data), fileInfo };
  };
  deps.lifecycle.enter(call.row.uid);
  try {
    if (!(await viaAgent(deps, call, () => handle.files.supported()))) {
      // An agent without the raw routes: its ReadFile, a few MiB at a time.
      for await (const { data, fileInfo } of readByMessages(deps, call, handle, path, ctx.signal))
        yield answer(data, fileInfo);
      return;
    }
    const file = await viaAgent(deps, call, () => handle.files.read(path, { signal: ctx.signal }));
    let fileInfo: FileInfo | undefined = file.fileInfo;
    try {
      // The agent's chunks as they came, a message's worth at a time: joined only for a message
      // that is encoded whole (JSON, or a compressed answer).
      for await (const data of streamChunks(file.body, READ_STREAM_MESSAGE_BYTES)) {
        yield answer(data, fileInfo);
        fileInfo = undefined;
      }
    } catch (error) {
      throw agentError(
        deps,
        call,
        new ConnectError(`${path}: the read broke off: ${ConnectError.from(error).rawMessage}`, Code.Aborted),
      );
    } finally {
      // A caller that stops reading early ends the agent's stream too.
      file.body.destroy();
    }
    // An empty file is one message, with its description.
    if (fileInfo) yield answer(new Uint8Array(0), fileInfo);
  } finally {
    deps.lifecycle.leave(call.row.uid);
  }
}

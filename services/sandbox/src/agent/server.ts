// The AgentService implementation: filesystem, processes, output streams and tunnels of one
// sandbox. It never logs requests: they carry process environments, which hold secret values.
import * as http2 from "node:http2";
import * as fs from "node:fs";
import * as path from "node:path";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  AgentService,
  type OutputChunkSchema,
  type ProcessExitSchema,
} from "@aiem/proto/enginemanager/agent/v1/agent_service_pb.js";
import { OutputStream } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { createFileRoutes } from "./file-routes.js";
import { createFilesystem } from "./filesystem.js";
import { type ProcessExitInfo, type ProcessManager, createProcessManager } from "./processes.js";
import { tunnel } from "./tunnel.js";
import { readUsage } from "./usage.js";

export interface AgentOptions {
  /** The agent's version, reported by Health. */
  readonly version: string;
  /** The sandbox root as the agent sees it: `/` under bubblewrap, a host directory unconfined. */
  readonly root: string;
  readonly helperPath?: string | undefined;
  readonly outputLimitBytes?: number;
  /** Output kept across all processes; past it, ended processes' logs are released. */
  readonly totalOutputLimitBytes?: number | undefined;
  readonly keepAliveMs?: number;
  readonly drainTimeoutMs?: number;
  readonly maxReadBytes?: number;
  readonly maxMessageBytes?: number;
  readonly oomScoreAdj?: number | undefined;
  readonly rlimitAsBytes?: number | undefined;
  readonly rlimitFsizeBytes?: number | undefined;
}

export const AGENT_DEFAULTS = {
  outputLimitBytes: 16 << 20,
  keepAliveMs: 5_000,
  drainTimeoutMs: 2_000,
  maxReadBytes: 4 << 20,
  maxMessageBytes: 256 << 20,
} as const;

const WINDOW_BYTES = 32 << 20;
const FRAME_BYTES = 1 << 20;

/** Largest data message of an output stream; chunks of one stream are merged up to it. */
const STREAM_MESSAGE_BYTES = 1 << 20;

type ChunkInit = MessageInitShape<typeof OutputChunkSchema>;

function exitMessage(exit: ProcessExitInfo): MessageInitShape<typeof ProcessExitSchema> {
  const endTime: Timestamp = timestampFromDate(exit.endTime);
  return { exitCode: exit.exitCode, signal: exit.signal, endTime };
}

function streamEnum(stream: "stdout" | "stderr"): OutputStream {
  return stream === "stdout" ? OutputStream.STDOUT : OutputStream.STDERR;
}

async function* streamOutput(
  processes: ProcessManager,
  processId: string,
  startOffset: number,
  skipReplay: boolean,
  keepAliveMs: number,
  context: HandlerContext,
): AsyncGenerator<{ chunk: ChunkInit }> {
  if (skipReplay && startOffset !== 0) {
    throw new ConnectError("skip_replay cannot be combined with a start_offset", Code.InvalidArgument);
  }
  if (startOffset < 0) throw new ConnectError("start_offset: must not be negative", Code.InvalidArgument);
  const { log } = processes.get(processId);
  if (startOffset > log.end) {
    throw new ConnectError(
      `start_offset: ${startOffset} is beyond the ${log.end} bytes written so far`,
      Code.OutOfRange,
    );
  }
  let offset = skipReplay ? log.end : startOffset;
  let dropped = offset < log.start ? log.start - offset : 0;
  if (dropped > 0) offset = log.start;
  for (;;) {
    if (context.signal.aborted) return;
    if (offset < log.start) {
      // A reader slower than the process fell behind the retention window mid-stream. The stream
      // may not skip silently, so it fails; resuming from the last offset reports the gap.
      throw new ConnectError(
        `output from offset ${offset} was discarded before it could be sent; resume from offset ${offset}`,
        Code.Aborted,
      );
    }
    const chunks = log.read(offset, STREAM_MESSAGE_BYTES);
    if (chunks.length > 0) {
      // Merge neighbouring chunks of the same stream into fewer, larger messages.
      let i = 0;
      while (i < chunks.length) {
        const first = chunks[i]!;
        let j = i + 1;
        let size = first.data.length;
        while (j < chunks.length && chunks[j]!.stream === first.stream && size < STREAM_MESSAGE_BYTES) {
          size += chunks[j]!.data.length;
          j++;
        }
        const data =
          j - i === 1
            ? first.data
            : Buffer.concat(
                chunks.slice(i, j).map((c) => c.data),
                size,
              );
        yield {
          chunk: {
            stream: streamEnum(first.stream),
            data,
            offset: BigInt(first.offset),
            droppedBytes: BigInt(dropped),
          },
        };
        dropped = 0;
        offset = first.offset + size;
        i = j;
      }
      continue;
    }
    if (log.sealed && offset >= log.end) {
      yield { chunk: { offset: BigInt(offset), end: true, droppedBytes: BigInt(dropped) } };
      return;
    }
    const timeout = AbortSignal.timeout(keepAliveMs);
    await log.changed(AbortSignal.any([timeout, context.signal]));
    if (timeout.aborted && log.end === offset && !log.sealed && !context.signal.aborted) {
      yield { chunk: { offset: BigInt(offset), keepAlive: true, droppedBytes: BigInt(dropped) } };
      dropped = 0;
    }
  }
}

/** Registers the AgentService on a Connect router. */
export function createAgentRoutes(options: AgentOptions): {
  routes: (router: ConnectRouter) => void;
  processes: ProcessManager;
  /** The raw file routes (file-routes.ts): true when it served the request. */
  fileRoutes: ReturnType<typeof createFileRoutes>;
} {
  const startedAt = performance.now();
  const keepAliveMs = options.keepAliveMs ?? AGENT_DEFAULTS.keepAliveMs;
  const filesystem = createFilesystem({
    root: options.root,
    maxReadBytes: options.maxReadBytes ?? AGENT_DEFAULTS.maxReadBytes,
    maxFileBytes: options.rlimitFsizeBytes,
  });
  const processes = createProcessManager({
    root: options.root,
    helperPath: options.helperPath,
    outputLimitBytes: options.outputLimitBytes ?? AGENT_DEFAULTS.outputLimitBytes,
    totalOutputLimitBytes: options.totalOutputLimitBytes,
    drainTimeoutMs: options.drainTimeoutMs ?? AGENT_DEFAULTS.drainTimeoutMs,
    oomScoreAdj: options.oomScoreAdj,
    rlimitAsBytes: options.rlimitAsBytes,
    rlimitFsizeBytes: options.rlimitFsizeBytes,
  });

  const routes = (router: ConnectRouter) =>
    router.service(AgentService, {
      health() {
        const ms = performance.now() - startedAt;
        return {
          version: options.version,
          uptime: { seconds: BigInt(Math.floor(ms / 1000)), nanos: Math.floor((ms % 1000) * 1e6) },
        };
      },
      stat(req) {
        return { fileInfo: filesystem.stat(req.path) };
      },
      listDirectory(req) {
        return { entries: filesystem.listDirectory(req.path) };
      },
      makeDirectory(req) {
        return { fileInfo: filesystem.makeDirectory(req.path, req.createParents, req.existOk) };
      },
      async writeFile(req) {
        return {
          fileInfo: await filesystem.writeFile(req.path, req.content, req.createParents, req.overwrite, req.mode),
        };
      },
      async writeFileStream(requests) {
        const messages = requests[Symbol.asyncIterator]();
        const first = await messages.next();
        const header = first.done ? undefined : first.value.header;
        if (!header) throw new ConnectError("the first message must have a header", Code.InvalidArgument);
        async function* content(): AsyncGenerator<Uint8Array> {
          if (header!.content.length > 0) yield header!.content;
          if (first.value!.data.length > 0) yield first.value!.data;
          for (;;) {
            const next = await messages.next();
            if (next.done) return;
            if (next.value.header)
              throw new ConnectError("only the first message may have a header", Code.InvalidArgument);
            if (next.value.data.length > 0) yield next.value.data;
          }
        }
        return {
          fileInfo: await filesystem.writeFile(
            header.path,
            content(),
            header.createParents,
            header.overwrite,
            header.mode,
          ),
        };
      },
      async readFile(req) {
        return filesystem.readFile(req.path, Number(req.offset), Number(req.limit));
      },
      async remove(req) {
        await filesystem.remove(req.path, req.recursive);
        return {};
      },
      move(req) {
        return { fileInfo: filesystem.move(req.source, req.destination, req.overwrite, req.createParents) };
      },
      async startProcess(req) {
        const record = await processes.start({
          processId: req.processId,
          command: req.command,
          args: req.args,
          workingDirectory: req.workingDirectory,
          environment: req.environment,
        });
        return { pid: record.pid };
      },
      signalProcess(req) {
        processes.signal(req.processId, req.signal);
        return {};
      },
      async waitProcess(req, context) {
        const exit = await processes.wait(req.processId, context.signal);
        const { log } = processes.get(req.processId);
        while (req.waitForOutput && !log.sealed && !context.signal.aborted) await log.changed(context.signal);
        return { exit: exitMessage(exit), outputComplete: log.sealed };
      },
      getProcess(req) {
        const record = processes.get(req.processId);
        return {
          running: record.exit === undefined,
          pid: record.pid,
          exit: record.exit === undefined ? undefined : exitMessage(record.exit),
        };
      },
      readOutput(req) {
        const { log } = processes.get(req.processId);
        const which =
          req.stream === OutputStream.COMBINED ? "combined" : req.stream === OutputStream.STDERR ? "stderr" : "stdout";
        const { data, dropped } = log.collect(which);
        return { data, droppedBytes: BigInt(dropped) };
      },
      readOutputFrames(req) {
        const { log } = processes.get(req.processId);
        const frames = log.read(log.start, Number.POSITIVE_INFINITY).map((c) => ({
          stream: streamEnum(c.stream),
          data: c.data,
          offset: BigInt(c.offset),
        }));
        return { frames, droppedBytes: BigInt(log.start) };
      },
      readUsage() {
        return readUsage(options.root);
      },
      streamOutput(req, context) {
        return streamOutput(processes, req.processId, Number(req.startOffset), req.skipReplay, keepAliveMs, context);
      },
      tunnel(requests, context) {
        return tunnel(requests, context);
      },
    });
  return { routes, processes, fileRoutes: createFileRoutes(filesystem, { maxFileBytes: options.rlimitFsizeBytes }) };
}

export interface AgentServer {
  readonly processes: ProcessManager;
  close(): Promise<void>;
}

/**
 * Serves the AgentService over HTTP/2 (gRPC and Connect) on a unix socket: a path to bind, or
 * the number of a descriptor the host bound (and maybe set listening) for this agent, on which
 * it listens in turn.
 */
export async function listenAgent(socket: string | { fd: number }, options: AgentOptions): Promise<AgentServer> {
  const { routes, processes, fileRoutes } = createAgentRoutes(options);
  const maxMessageBytes = options.maxMessageBytes ?? AGENT_DEFAULTS.maxMessageBytes;
  const connect = connectNodeAdapter({
    routes,
    readMaxBytes: maxMessageBytes,
    writeMaxBytes: maxMessageBytes,
    acceptCompression: [],
  });
  const server = http2.createServer(
    { settings: { initialWindowSize: WINDOW_BYTES, maxFrameSize: FRAME_BYTES } },
    (req, res) => {
      if (!fileRoutes(req, res)) connect(req, res);
    },
  );
  // Bulk transfers (WriteFile content, output streams) should not wait on window updates.
  server.on("session", (session) => session.setLocalWindowSize(WINDOW_BYTES));
  if (typeof socket === "string") {
    try {
      fs.unlinkSync(socket);
    } catch {
      // no stale socket
    }
  }
  const address = typeof socket === "string" ? shortSocketPath(socket) : socket;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(address, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    processes,
    close: () =>
      new Promise<void>((resolve) => {
        processes.close();
        server.close(() => resolve());
      }),
  };
}

/**
 * sun_path holds 108 bytes: a longer path is bound through a descriptor of its directory, which
 * the kernel resolves like a short path. The descriptor stays open for the agent's life, because
 * closing the server unlinks the name it bound.
 */
function shortSocketPath(socket: string): string {
  if (Buffer.byteLength(socket) <= 100) return socket;
  const dirFd = fs.openSync(path.dirname(socket), fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  return `/proc/self/fd/${dirFd}/${path.basename(socket)}`;
}

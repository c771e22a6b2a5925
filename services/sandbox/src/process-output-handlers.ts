// The output of a process, which the agent keeps while its sandbox runs: read whole, read as
// frames in write order, or streamed as it is written (waiting for a pending process to start).
import type { HandlerContext } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Action } from "@aiem/kit/authz";
import { Code, invalidArgument, notFound, outOfRange } from "@aiem/kit/errors";
import { Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import {
  OutputStream,
  type StreamProcessOutputRequest,
  type StreamProcessOutputResponseSchema,
} from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { SandboxEngine_State } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { type SandboxCall, agentError, viaAgent } from "./access.js";
import { sandboxKey } from "./lifecycle.js";
import {
  PROCESS_RESOURCE_TYPE,
  type ProcessCall,
  type ProcessDeps,
  type ProcessServiceImpl,
  openProcess,
  outputUnavailable,
  requireStartable,
} from "./process-access.js";
import { loadProcess, loadSandboxByUid, processStateOf, sandboxStateName, type ProcessRow } from "./store.js";

const P = Process_State;

type StreamMessage = MessageInitShape<typeof StreamProcessOutputResponseSchema>;

export function createProcessOutputHandlers(
  deps: ProcessDeps,
): Pick<ProcessServiceImpl, "readProcessOutput" | "readProcessOutputFrames" | "streamProcessOutput"> {
  /** The agent holding a started process's output; undefined for a process that has not started. */
  function outputHandle({ call, row }: ProcessCall) {
    if (processStateOf(row.state) === P.PENDING || !row.agent_id) return undefined;
    const handle = deps.lifecycle.handle(call.row);
    if (!handle || call.row.state !== sandboxStateName(SandboxEngine_State.RUNNING)) throw outputUnavailable(call, row);
    return { handle, agentId: row.agent_id };
  }

  return {
    async readProcessOutput(req, ctx) {
      const opened = await openProcess(deps, ctx, req.name, Action.GET);
      const { call, row } = opened;
      const agent = outputHandle(opened);
      if (!agent) return { data: new Uint8Array(0), droppedBytes: 0n };
      const stream = req.outputStream === OutputStream.UNSPECIFIED ? OutputStream.STDOUT : req.outputStream;
      const res = await viaAgent(
        deps,
        call,
        () => agent.handle.client.readOutput({ processId: agent.agentId, stream }),
        (e) => (e.code === Code.NotFound ? outputUnavailable(call, row) : undefined),
      );
      return { data: res.data, droppedBytes: res.droppedBytes };
    },

    async readProcessOutputFrames(req, ctx) {
      const opened = await openProcess(deps, ctx, req.name, Action.GET);
      const { call, row } = opened;
      const agent = outputHandle(opened);
      if (!agent) return { frames: [], droppedBytes: 0n };
      const res = await viaAgent(
        deps,
        call,
        () => agent.handle.client.readOutputFrames({ processId: agent.agentId }),
        (e) => (e.code === Code.NotFound ? outputUnavailable(call, row) : undefined),
      );
      return {
        frames: res.frames.map((f) => ({ stream: f.stream, data: f.data, offset: f.offset })),
        droppedBytes: res.droppedBytes,
      };
    },

    streamProcessOutput: (req, ctx) => streamOutput(deps, req, ctx),
  };
}

async function* streamOutput(
  deps: ProcessDeps,
  req: StreamProcessOutputRequest,
  ctx: HandlerContext,
): AsyncGenerator<StreamMessage> {
  const { lifecycle } = deps;
  const db = () => deps.context.database().db;
  const { call, row: first, key } = await openProcess(deps, ctx, req.name, Action.GET);
  const startOffset = req.startOffset;
  if (startOffset < 0n) throw invalidArgument("start_offset", "must not be negative");
  if (req.skipReplay && startOffset !== 0n)
    throw invalidArgument("skip_replay", "cannot be combined with a non-zero start_offset");
  lifecycle.enter(call.row.uid);
  try {
    let row = first;
    // A pending process has written nothing yet: wait for its start, keeping the stream alive.
    while (processStateOf(row.state) === P.PENDING) {
      if (startOffset > 0n) throw outOfRange("start_offset", `${startOffset} is beyond the 0 bytes written so far`);
      await requireStartable(db(), call.row.uid, row);
      const timeout = AbortSignal.timeout(deps.keepAliveMs);
      await deps.hub.next([key, sandboxKey(call.row.uid)], AbortSignal.any([timeout, ctx.signal]));
      if (ctx.signal.aborted) return;
      const again = await loadProcess(db(), call.row.uid, row.id);
      if (!again) throw notFound(req.name, PROCESS_RESOURCE_TYPE);
      row = again;
      if (timeout.aborted && processStateOf(row.state) === P.PENDING) yield { keepAlive: true, offset: 0n };
    }
    const sandbox = (await loadSandboxByUid(db(), call.row.uid)) ?? call.row;
    yield* agentOutput(deps, { ...call, row: sandbox }, row, req, ctx.signal);
  } finally {
    lifecycle.leave(call.row.uid);
  }
}

/** A started process's output from the agent, from `req.startOffset` on, until the process's end. */
async function* agentOutput(
  deps: ProcessDeps,
  call: SandboxCall,
  row: ProcessRow,
  req: StreamProcessOutputRequest,
  signal: AbortSignal,
): AsyncGenerator<StreamMessage> {
  const handle = deps.lifecycle.handle(call.row);
  if (!handle || call.row.state !== sandboxStateName(SandboxEngine_State.RUNNING) || !row.agent_id)
    throw outputUnavailable(call, row);
  try {
    for await (const m of handle.client.streamOutput(
      { processId: row.agent_id, startOffset: req.startOffset, skipReplay: req.skipReplay },
      { signal },
    )) {
      const chunk = m.chunk;
      if (!chunk) continue;
      deps.lifecycle.touch(call.row.uid);
      if (chunk.end) return;
      yield {
        stream: chunk.stream,
        data: chunk.data,
        offset: chunk.offset,
        droppedBytes: chunk.droppedBytes,
        keepAlive: chunk.keepAlive,
      };
    }
  } catch (err) {
    if (signal.aborted) return;
    throw agentError(deps, call, err, (e) => (e.code === Code.NotFound ? outputUnavailable(call, row) : undefined));
  }
}

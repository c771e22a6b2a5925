// WaitProcess: the ended process, once its end is recorded and its output complete.
import type { HandlerContext } from "@connectrpc/connect";
import { Action } from "@aiem/kit/authz";
import { Code, ConnectError, notFound } from "@aiem/kit/errors";
import { Process_State } from "@aiem/proto/enginemanager/sandbox/v1/process_pb.js";
import type { WaitProcessRequest } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import type { SandboxCall } from "./access.js";
import { sandboxKey } from "./lifecycle.js";
import {
  PROCESS_RESOURCE_TYPE,
  type ProcessDeps,
  type ProcessServiceImpl,
  authorizeProcess,
  processKey,
  requireStartable,
} from "./process-access.js";
import type { ProcessWatcher } from "./process-watcher.js";
import { loadProcess, presentProcess, processStateOf, type ProcessRow } from "./store.js";

const P = Process_State;

/** How often a wait looks at its process again even without news. */
const RECHECK_MS = 2_000;

const waitCancelled = () => new ConnectError("the wait was cancelled; the process was not affected", Code.Canceled);

const hasEnded = (row: ProcessRow) =>
  processStateOf(row.state) === P.SUCCEEDED || processStateOf(row.state) === P.FAILED;

export function createWaitProcessHandler(
  deps: ProcessDeps,
  watcher: ProcessWatcher,
): Pick<ProcessServiceImpl, "waitProcess"> {
  const { context, lifecycle } = deps;
  return { waitProcess };

  async function waitProcess(req: WaitProcessRequest, ctx: HandlerContext) {
    const { call, process } = await authorizeProcess(deps, ctx, req.name, Action.GET);
    const key = processKey(call.row.uid, process);
    // A process this service follows needs no read: its watcher holds the ended row once the
    // end is recorded and the output complete. Otherwise (or when that came out otherwise) the
    // database decides.
    const watching = watcher.watching(key);
    if (watching) {
      const ended = await lifecycle.busy(call.row.uid, () => untilAborted(watching, ctx.signal));
      if (ended && hasEnded(ended)) return { process: presentProcess(ended) };
    } else {
      const kept = watcher.ended.kept(key);
      if (kept) return { process: presentProcess(kept) };
    }
    const row = await loadProcess(context.database().db, call.row.uid, process);
    if (!row) throw notFound(req.name, PROCESS_RESOURCE_TYPE);
    // Ended and followed by no watcher (the common case: the exit was asked for with the start):
    // settled() would answer the same at once, after setting up a wait for news.
    if (hasEnded(row) && !watcher.watching(key)) return { process: presentProcess(row) };
    const done = await lifecycle.busy(call.row.uid, () => settled(deps, watcher, call, row, ctx.signal));
    return { process: presentProcess(done) };
  }
}

/** Waits until the process has ended and its output is complete (or `signal` aborts). */
async function settled(
  deps: ProcessDeps,
  watcher: ProcessWatcher,
  call: SandboxCall,
  first: ProcessRow,
  signal: AbortSignal,
): Promise<ProcessRow> {
  const db = () => deps.context.database().db;
  const key = processKey(call.row.uid, first.id);
  let row: ProcessRow | undefined = first;
  for (;;) {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    const next = deps.hub.next([key, sandboxKey(call.row.uid)], stop.signal);
    try {
      row ??= await loadProcess(db(), call.row.uid, first.id);
      if (!row) throw notFound(first.name, PROCESS_RESOURCE_TYPE);
      const state = processStateOf(row.state);
      if (state === P.RUNNING && !watcher.watching(key)) watcher.rewatch(call.row.uid, row);
      const watching = watcher.watching(key);
      if ((state === P.SUCCEEDED || state === P.FAILED) && !watching) return row;
      if (state === P.PENDING) await requireStartable(db(), call.row.uid, row);
      if (signal.aborted) throw waitCancelled();
      // A running process with a watcher: its result is the ended row, once the output is complete.
      // Checked again now and then, whatever was (or was not) announced.
      const recheck = new Promise<undefined>((r) => setTimeout(r, RECHECK_MS, undefined).unref());
      const ended = await Promise.race([...(watching ? [watching] : []), next.then(() => undefined), recheck]);
      if (signal.aborted) throw waitCancelled();
      row = ended && !watcher.watching(key) ? ended : undefined;
      if (row && !hasEnded(row)) row = undefined;
    } finally {
      signal.removeEventListener("abort", onAbort);
      stop.abort();
    }
  }
}

/** `work`'s result, or CANCELED once `signal` aborts. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(waitCancelled());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(waitCancelled());
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

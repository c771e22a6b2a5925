// The NotebookEngineService handlers: each call's generated request read into the calls every
// engine kind shares (engine-handlers.ts, engine-actions.ts, engine-update.ts).
import type { ServiceImpl } from "@connectrpc/connect";
import type { NotebookEngine } from "@aiem/proto/enginemanager/v1/notebook_engine_pb.js";
import type { NotebookEngineService } from "@aiem/proto/enginemanager/v1/notebook_engine_service_pb.js";
import type { ServiceContext } from "./context.js";
import { accessEngine, deleteEngine, pauseEngine, resizeEngineStorage, resumeEngine } from "./engine-actions.js";
import { createEngineCalls } from "./engine-calls.js";
import { createEngineCall, getEngine, listEngines } from "./engine-handlers.js";
import { updateEngine } from "./engine-update.js";
import { NOTEBOOK, type AnyEngine } from "./kinds.js";

/** The kind's calls answer any engine; under this service's names it is always a notebook engine. */
const notebook = (engine: AnyEngine) => engine as NotebookEngine;

export function createNotebookEngineHandlers(context: ServiceContext): ServiceImpl<typeof NotebookEngineService> {
  const calls = createEngineCalls(context, NOTEBOOK);
  return {
    async createNotebookEngine(req, ctx) {
      const engine = req.notebookEngine;
      const request = { parent: req.parent, id: req.notebookEngineId, engine, validateOnly: req.validateOnly };
      return { notebookEngine: notebook(await createEngineCall(calls, request, ctx)) };
    },
    getNotebookEngine: async (req, ctx) => ({ notebookEngine: notebook(await getEngine(calls, req, ctx)) }),
    async listNotebookEngines(req, ctx) {
      const page = await listEngines(calls, req, ctx);
      const notebookEngines = page.engines.map(notebook);
      return { notebookEngines, nextPageToken: page.nextPageToken, totalSize: page.totalSize };
    },
    async updateNotebookEngine(req, ctx) {
      const engine = await updateEngine(calls, { ...req, engine: req.notebookEngine }, ctx);
      return { notebookEngine: notebook(engine) };
    },
    async deleteNotebookEngine(req, ctx) {
      const engine = await deleteEngine(calls, req, ctx);
      return engine ? { notebookEngine: notebook(engine) } : {};
    },
    pauseNotebookEngine: async (req, ctx) => ({ notebookEngine: notebook(await pauseEngine(calls, req, ctx)) }),
    resumeNotebookEngine: async (req, ctx) => ({ notebookEngine: notebook(await resumeEngine(calls, req, ctx)) }),
    async resizeNotebookEngineStorage(req, ctx) {
      return { notebookEngine: notebook(await resizeEngineStorage(calls, req, ctx)) };
    },
    accessNotebookEngine: async (req, ctx) => ({ uri: await accessEngine(calls, req, ctx) }),
  };
}

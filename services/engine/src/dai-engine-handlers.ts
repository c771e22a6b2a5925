// The DAIEngineService handlers: each call's generated request read into the calls every engine
// kind shares (engine-handlers.ts, engine-actions.ts, engine-update.ts).
import type { ServiceImpl } from "@connectrpc/connect";
import type { DAIEngine } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import type { DAIEngineService } from "@aiem/proto/enginemanager/v1/dai_engine_service_pb.js";
import {
  deleteEngine,
  downloadEngineLogs,
  migrateEngineCreator,
  pauseEngine,
  resizeEngineStorage,
  resumeEngine,
  upgradeEngineVersion,
} from "./engine-actions.js";
import { createEngineCalls } from "./engine-calls.js";
import { createEngineCall, getEngine, listEngines } from "./engine-handlers.js";
import { updateEngine } from "./engine-update.js";
import type { ServiceContext } from "./context.js";
import { DAI, type AnyEngine } from "./kinds.js";

/** The kind's calls answer any engine; under this service's names it is always a DAI engine. */
const dai = (engine: AnyEngine) => engine as DAIEngine;

export function createDAIEngineHandlers(context: ServiceContext): ServiceImpl<typeof DAIEngineService> {
  const calls = createEngineCalls(context, DAI);
  return {
    async createDAIEngine(req, ctx) {
      const request = {
        parent: req.parent,
        id: req.daiEngineId,
        engine: req.daiEngine,
        validateOnly: req.validateOnly,
      };
      return { daiEngine: dai(await createEngineCall(calls, request, ctx)) };
    },
    getDAIEngine: async (req, ctx) => ({ daiEngine: dai(await getEngine(calls, req, ctx)) }),
    async listDAIEngines(req, ctx) {
      const page = await listEngines(calls, req, ctx);
      return { daiEngines: page.engines.map(dai), nextPageToken: page.nextPageToken, totalSize: page.totalSize };
    },
    async updateDAIEngine(req, ctx) {
      return { daiEngine: dai(await updateEngine(calls, { ...req, engine: req.daiEngine }, ctx)) };
    },
    async deleteDAIEngine(req, ctx) {
      const engine = await deleteEngine(calls, req, ctx);
      return engine ? { daiEngine: dai(engine) } : {};
    },
    pauseDAIEngine: async (req, ctx) => ({ daiEngine: dai(await pauseEngine(calls, req, ctx)) }),
    resumeDAIEngine: async (req, ctx) => ({ daiEngine: dai(await resumeEngine(calls, req, ctx)) }),
    downloadDAIEngineLogs: async (req, ctx) => ({ logs: await downloadEngineLogs(calls, req, ctx) }),
    migrateDAIEngineCreator: async (req, ctx) => ({ daiEngine: dai(await migrateEngineCreator(calls, req, ctx)) }),
    resizeDAIEngineStorage: async (req, ctx) => ({ daiEngine: dai(await resizeEngineStorage(calls, req, ctx)) }),
    upgradeDAIEngineVersion: async (req, ctx) => ({ daiEngine: dai(await upgradeEngineVersion(calls, req, ctx)) }),
  };
}

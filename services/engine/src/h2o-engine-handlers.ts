// The H2OEngineService handlers: each call's generated request read into the calls every engine
// kind shares (engine-handlers.ts, engine-actions.ts), and the size calculators of H2O engines.
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { principalOf } from "@aiem/kit/server";
import type { H2OEngine } from "@aiem/proto/enginemanager/v1/h2o_engine_pb.js";
import type { H2OEngineService } from "@aiem/proto/enginemanager/v1/h2o_engine_service_pb.js";
import { H2OEngineSizeLimitsSchema, H2OEngineSizeSchema } from "@aiem/proto/enginemanager/v1/h2o_engine_size_pb.js";
import type { ServiceContext } from "./context.js";
import { deleteEngine, downloadEngineLogs, terminateEngine } from "./engine-actions.js";
import { createEngineCalls } from "./engine-calls.js";
import { createEngineCall, getEngine, listEngines } from "./engine-handlers.js";
import { compressedDatasetSize, rawDatasetSize } from "./h2o-size.js";
import { H2O, type AnyEngine } from "./kinds.js";

/** The kind's calls answer any engine; under this service's names it is always an H2O engine. */
const h2o = (engine: AnyEngine) => engine as H2OEngine;

export function createH2OEngineHandlers(context: ServiceContext): ServiceImpl<typeof H2OEngineService> {
  const calls = createEngineCalls(context, H2O);
  return {
    async createH2OEngine(req, ctx) {
      const request = {
        parent: req.parent,
        id: req.h2oEngineId,
        engine: req.h2oEngine,
        validateOnly: req.validateOnly,
      };
      return { h2oEngine: h2o(await createEngineCall(calls, request, ctx)) };
    },
    getH2OEngine: async (req, ctx) => ({ h2oEngine: h2o(await getEngine(calls, req, ctx)) }),
    async listH2OEngines(req, ctx) {
      const page = await listEngines(calls, req, ctx);
      return { h2oEngines: page.engines.map(h2o), nextPageToken: page.nextPageToken, totalSize: page.totalSize };
    },
    async deleteH2OEngine(req, ctx) {
      const engine = await deleteEngine(calls, req, ctx);
      return engine ? { h2oEngine: h2o(engine) } : {};
    },
    terminateH2OEngine: async (req, ctx) => ({ h2oEngine: h2o(await terminateEngine(calls, req, ctx)) }),
    downloadH2OEngineLogs: async (req, ctx) => ({ logs: await downloadEngineLogs(calls, req, ctx) }),
    calculateH2OEngineSizeCompressedDataset(req, ctx) {
      principalOf(ctx);
      const size = compressedDatasetSize(req.rowsCount, req.columnsCount, req.limits);
      return {
        h2oEngineSize: create(H2OEngineSizeSchema, size),
        limits: create(H2OEngineSizeLimitsSchema, req.limits),
      };
    },
    calculateH2OEngineSizeRawDataset(req, ctx) {
      principalOf(ctx);
      const size = rawDatasetSize(req.datasetSizeBytes, req.limits);
      return {
        h2oEngineSize: create(H2OEngineSizeSchema, size),
        limits: create(H2OEngineSizeLimitsSchema, req.limits),
      };
    },
  };
}

// What the runtime is told to run for an engine, built from its row and stored resource alone (no
// catalogue lookup), so the reconciler works while the catalogue is away.
import { fromBinary } from "@bufbuild/protobuf";
import type { DAIEngine } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import type { H2OEngine } from "@aiem/proto/enginemanager/v1/h2o_engine_pb.js";
import type { NotebookEngine } from "@aiem/proto/enginemanager/v1/notebook_engine_pb.js";
import { KIND_BY_TYPE } from "./kinds.js";
import type { KubernetesPlacement } from "./runtime/kubernetes/engine-objects.js";
import { placementOf } from "./runtime/kubernetes/placement.js";
import type { EngineRunSpec, RuntimeEngineKind } from "./runtime/runtime.js";
import { enginePath, type EngineRow } from "./store.js";
import { effectiveConfig } from "./validation.js";

const RUNTIME_KIND: Record<EngineRow["type"], RuntimeEngineKind> = {
  daiEngines: "dai",
  h2oEngines: "h2o",
  notebookEngines: "notebook",
};

export function runSpecOf(row: EngineRow, coreConfig: Readonly<Record<string, string>>): EngineRunSpec {
  const kind = KIND_BY_TYPE[row.type];
  const resource = fromBinary(kind.schema, row.resource);
  let image = "";
  let config: Record<string, string> = {};
  const options: Record<string, string> = {};
  let kubernetes: KubernetesPlacement = {};
  switch (row.type) {
    case "daiEngines": {
      const d = resource as DAIEngine;
      image = d.daiEngineVersionInfo?.image ?? "";
      config = effectiveConfig(
        {
          baseConfiguration: d.profileInfo?.baseConfiguration ?? {},
          configurationOverride: d.profileInfo?.configurationOverride ?? {},
        },
        d.config,
        coreConfig,
      );
      if (d.profileInfo?.tritonEnabled) options.triton = "true";
      kubernetes = placementOf({ ...d.profileInfo, ...pullSettings(d.daiEngineVersionInfo) });
      break;
    }
    case "h2oEngines": {
      const h = resource as H2OEngine;
      image = h.h2oEngineVersionInfo?.image ?? "";
      if (h.profileInfo?.javaClasspath) options.javaClasspath = h.profileInfo.javaClasspath;
      if (h.profileInfo?.javaOptions) options.javaOptions = h.profileInfo.javaOptions;
      if (h.profileInfo?.h2oOptions) options.h2oOptions = h.profileInfo.h2oOptions;
      kubernetes = placementOf({ ...h.profileInfo, ...pullSettings(h.h2oEngineVersionInfo) });
      break;
    }
    case "notebookEngines": {
      const n = resource as NotebookEngine;
      image = n.notebookImageInfo?.image ?? "";
      kubernetes = placementOf({ ...n.profileInfo, ...pullSettings(n.notebookImageInfo) });
      if (n.profileInfo?.syncGitRepositoryEnabled) {
        options.gitRepository = n.profileInfo.gitRepository;
        options.gitRef = n.profileInfo.gitRef;
        options.gitDirectoryName = n.profileInfo.gitDirectoryName;
      }
      break;
    }
  }
  return {
    uid: row.uid,
    kind: RUNTIME_KIND[row.type],
    name: row.name,
    version: row.type === "notebookEngines" ? row.version_name : row.version,
    image,
    cpu: row.cpu,
    gpu: row.gpu,
    memoryBytes: row.memory_bytes,
    storageBytes: row.storage_bytes,
    nodeCount: row.node_count ?? 1,
    basePath: enginePath(row.uid),
    config,
    options,
    kubernetes,
  };
}

function pullSettings(version: { imagePullPolicy: number; imagePullSecrets: string[] } | undefined) {
  return { imagePullPolicy: version?.imagePullPolicy ?? 0, imagePullSecrets: version?.imagePullSecrets ?? [] };
}

// The engine service: DAI, H2O and notebook engines, the mixed Engine list, the reconciler that
// runs them through a runtime (`local`: one process per engine), and `/engines/<uid>/` URLs to
// their web servers. A host mounts createEngineModule() behind the auth interceptor.
export { engineSettings, readEngineEnv, ENGINE_SETTING_DEFAULTS } from "./config.js";
export type { EngineConfig, EngineSettings } from "./config.js";
export { createEngineModule, ENGINE_SCHEMA, ENGINE_SERVICES } from "./module.js";
export type { EngineModule, EngineModuleDeps } from "./module.js";
export { createEngineProxy, ENGINE_ORIGIN_HEADER, ENGINE_PATH_PREFIX } from "./proxy.js";
export type { EngineHttpRoute, EngineProxyOptions } from "./proxy.js";
export {
  createLocalRuntime,
  findOnPath,
  killEngineProcesses,
  runningEngines,
  STAND_IN_SERVER,
  stopEngines,
} from "./runtime/local-runtime.js";
export type { LocalRuntime, LocalRuntimeOptions } from "./runtime/local-runtime.js";
export type {
  DiskUsage,
  EngineEndpoint,
  EngineExit,
  EnginePhase,
  EngineRunSpec,
  EngineRuntime,
  EngineStatus,
} from "./runtime/runtime.js";
export { compressedDatasetSize, rawDatasetSize } from "./h2o-size.js";
export { RESERVED_DAI_CONFIG_KEYS, effectiveConfig } from "./validation.js";
export { compareVersions } from "./semver.js";

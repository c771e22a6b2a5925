// A Driverless AI engine's run spec of 1 CPU, 1 GiB of memory and 1 GiB of storage, for the
// runtime tests; `overrides` replaces any field.
import type { EngineRunSpec } from "../runtime/runtime.js";

export function daiRunSpec(uid: string, overrides: Partial<EngineRunSpec> = {}): EngineRunSpec {
  return {
    uid,
    kind: "dai",
    name: `workspaces/w1/daiEngines/${uid}`,
    version: "1.11.0",
    image: "example.invalid/dai:1.11.0",
    cpu: 1,
    gpu: 0,
    memoryBytes: 1n << 30n,
    storageBytes: 1n << 30n,
    nodeCount: 1,
    basePath: `/engines/${uid}/`,
    config: {},
    options: {},
    ...overrides,
  };
}

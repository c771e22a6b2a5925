// The test policy and its fixed callers, and fast engine settings for tests.
import { engineSettings, type EngineSettings } from "../config.js";

export { TEST_POLICY, TEST_WORKSPACE } from "@aiem/kit/testing";

/** The fixed callers: an administrator, two members, a viewer, a stranger, and nobody. */
export type Who = "admin" | "alice" | "bob" | "viewer" | "stranger" | "erin" | "anonymous";
export const USERS: Record<Exclude<Who, "anonymous">, string> = {
  admin: "root",
  alice: "alice",
  bob: "bob",
  viewer: "carol",
  stranger: "dave",
  erin: "erin",
};

/** Fast reconciler settings for tests; the stand-in server for notebooks unless told otherwise. */
export function testEngineSettings(overrides: Partial<EngineSettings> = {}): EngineSettings {
  return engineSettings({
    reconcileIntervalMs: 100,
    // Own engines' ends are reported at once and limits are due times, so checks can be rare.
    checkIntervalMs: 2_000,
    startTimeoutMs: 30_000,
    stopTimeoutMs: 3_000,
    activityFlushMs: 100,
    jupyterCommand: "none",
    // Only the suites about H2O-3 itself start JVMs; the others need an H2O engine's lifecycle only.
    h2oServer: "stand-in",
    ...overrides,
  });
}

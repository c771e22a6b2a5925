// Test support for the engine service (`@aiem/engine/testing`): the real host with a catalogue
// beside it, the test policy, REST calls, catalogue fixtures and a runtime whose steps a test can
// hold. Nothing outside tests imports it.
export { catalogueFixture, freshId, updateCatalogue } from "./catalogue-fixtures.js";
export { startEngineTestHost, type EngineTestHost, type EngineTestHostOptions } from "./engine-test-host.js";
export { createGatedRuntime, type GatedOp, type GatedRuntime } from "./gated-runtime.js";
export type { CallOptions, Reply } from "./rest-client.js";
export { TEST_POLICY, TEST_WORKSPACE, testEngineSettings, USERS, type Who } from "./test-policy.js";

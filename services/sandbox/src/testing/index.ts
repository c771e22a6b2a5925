// Test support for the sandbox service (not part of it): its harness, REST client and assertions,
// fixtures and waits. Only tests import it.
export * from "./catalogue-fixture.js";
export * from "./connect-transport.js";
export * from "./extra-module.js";
export * from "./fixtures.js";
export * from "./rest-assertions.js";
export * from "./rest-client.js";
export * from "./sandbox-harness.js";
export * from "./waits.js";

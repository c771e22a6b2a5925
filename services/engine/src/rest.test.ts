// The engine service through the REST edge, as clients see it, on the real host of `npm start`
// with the catalogue beside it. The suites share this file's host (and its PGlite), which is most
// of a suite's start-up cost; each suite makes its own catalogue fixtures and engines.
import { afterAll, beforeAll } from "vitest";
import { setHost, standardCatalogue } from "./testing/rest-suite.js";
import { startEngineTestHost, type EngineTestHost } from "./testing/index.js";
import "./create.suite.js";
import "./calls.suite.js";
import "./permissions.suite.js";
import "./state-machine.suite.js";
import "./limits.suite.js";
import "./proxy.suite.js";
import "./log-stream.suite.js";

let host: EngineTestHost | undefined;

beforeAll(async () => {
  host = await startEngineTestHost({ settings: { daiCoreConfig: { b: "core", max_cores: "99" } } });
  setHost(host);
  await standardCatalogue();
});

afterAll(async () => {
  setHost(undefined);
  await host?.stop();
});

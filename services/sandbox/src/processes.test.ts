// Processes, ports and the sandbox lifecycle through the REST edge (see rest.test.ts for why
// suites are grouped into a few files). The lifecycle suite restarts the service's module, so it
// comes last.
import { afterAll } from "vitest";
import { stopSharedHarness } from "./testing/index.js";
import "./processes.suite.js";
import "./ports.suite.js";
import "./lifecycle.suite.js";

afterAll(() => stopSharedHarness());

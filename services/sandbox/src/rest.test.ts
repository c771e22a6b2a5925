// The sandbox service through the REST edge, as clients see it. The suites share this file's
// host (one PGlite or PostgreSQL schema, one bus), which is most of a suite's start-up cost.
import { afterAll } from "vitest";
import { stopSharedHarness } from "./testing/index.js";
import "./engines.suite.js";
import "./filesystem.suite.js";
import "./file-transfer.suite.js";
import "./file-streams.suite.js";
import "./drive-secrets.suite.js";
import "./metrics.suite.js";
import "./permissions.suite.js";

afterAll(() => stopSharedHarness());

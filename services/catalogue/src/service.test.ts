// Permissions, secrets, replication and the module's contract with its host (see resources.test.ts
// for why suites are grouped into a few files).
import "./permissions.suite.js";
import "./secrets.suite.js";
import "./replication.suite.js";
import "./module.suite.js";

// Profiles, versions, images and templates through Connect. The suites share this file's module
// graph, and with it one in-memory PGlite instance, which is most of a suite's start-up cost.
import "./profiles.suite.js";
import "./versions.suite.js";
import "./images-templates.suite.js";
import "./lists.suite.js";

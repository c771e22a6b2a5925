// Builds the native sandbox agent into .tools/go-agent/ (a no-op when its sources did not change).
import { buildGoAgent } from "../services/sandbox/src/runtime/go-agent-build.js";

const built = await buildGoAgent();
if (built.path === undefined) {
  console.error(`build:agent: ${built.reason}`);
  process.exitCode = 1;
} else {
  console.log(`build:agent: ${built.path}`);
}

// `node services/sandbox/src/runtime/prepare-cli.js <dir>`: builds what every sandbox needs (the
// agent, the launcher helpers and the seccomp filter) into `<dir>` ahead of time, as an image
// build does, so that a service with AIEM_SANDBOX_AGENT_CACHE=<dir> compiles nothing at run time.
// Files already there (named by a hash of their source) are kept.
import { prepareAgentArtifacts } from "./agent-artifacts.js";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: prepare-cli <cache directory>");
  process.exit(2);
}
const artifacts = await prepareAgentArtifacts(dir);
const missing = Object.entries(artifacts).filter(([key, value]) => key.endsWith("UnavailableReason") && value);
for (const [key, reason] of missing)
  console.error(`prepare: ${key.replace("UnavailableReason", "")}: ${String(reason)}`);
console.log(
  JSON.stringify({
    agent: artifacts.agentPath,
    launch: artifacts.launchPath,
    enter: artifacts.enterPath,
    seccompFilter: artifacts.seccompFilterPath,
  }),
);
// Strict where asked (the image build must not ship a half-built cache).
if (process.env.AIEM_PREPARE_STRICT === "true" && missing.length > 0) process.exitCode = 1;

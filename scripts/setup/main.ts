// The setup step `npm test` runs first: checks what the suites need on the machine and, as root
// with apt-get, installs what is missing; otherwise stops with the command to run.
// `--services` (used by .ci/run) also installs, configures and starts PostgreSQL and NATS;
// `--kubernetes` also builds the control plane the Kubernetes suites run (opt-in, docs/adr/0160).
import { resolve } from "node:path";
import { serviceDependencies, testDependencies } from "./dependencies.js";
import { executeStep, SetupError } from "./execute.js";
import { KubernetesBuildError } from "./kubernetes-build.js";
import { describeStep, planSetup } from "./plan.js";
import { probeFacts } from "./probe.js";
import { buildGoAgent } from "../../services/sandbox/src/runtime/go-agent-build.js";

async function main(): Promise<number> {
  const services = process.argv.includes("--services");
  const kubernetes = process.argv.includes("--kubernetes");
  const root = resolve(import.meta.dirname, "..", "..");
  const paths = { venvDir: resolve(root, ".venv"), requirements: resolve(root, "requirements-test.txt") };
  const deps = services ? [...testDependencies, ...serviceDependencies] : testDependencies;

  const facts = await probeFacts(deps, paths, services, kubernetes);
  const plan = planSetup(deps, facts, { services, venv: true, kubernetes });
  if (plan.kind === "blocked") {
    console.error(plan.message);
    return 1;
  }
  for (const step of plan.steps) {
    console.log(describeStep(step, deps));
    await executeStep(step, paths);
  }
  if (plan.steps.length === 0) console.log("setup: system dependencies and the test virtual environment are in place");
  // The native sandbox agent, which every sandbox runs (a no-op when its sources did not change).
  const agent = await buildGoAgent();
  if (agent.path === undefined) {
    console.error(`setup: ${agent.reason}`);
    return 1;
  }
  if (kubernetes && !plan.steps.some((s) => s.kind === "build-kubernetes")) {
    console.log("setup: the Kubernetes test binaries are built");
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof SetupError || error instanceof KubernetesBuildError ? error.message : error);
    process.exitCode = 1;
  },
);

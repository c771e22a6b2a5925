// What the setup step decides, apart from how it looks at the machine or changes it, so that the
// decisions can be tested without touching the real system.

/** A system package the tests (or CI's services) need. */
export interface Dependency {
  readonly debianPackage: string;
  /** Why the tests need it; printed when it is installed. */
  readonly purpose: string;
  /** Commands on PATH or absolute paths (one `*` segment allowed); any one present means installed. */
  readonly probes: readonly string[];
}

/** What the probe found on the machine. */
export interface Facts {
  /** Debian package names of the dependencies found present. */
  readonly present: ReadonlySet<string>;
  readonly root: boolean;
  readonly aptGet: boolean;
  /** The machine's python3 can create a virtual environment (venv and ensurepip). */
  readonly pythonVenv: boolean;
  /** The test virtual environment: absent, built from another requirements file, or current. */
  readonly venv: "missing" | "stale" | "current";
  /** Only for the services plan: whether each server answers on its port. */
  readonly postgresUp?: boolean;
  readonly natsUp?: boolean;
  /** Only for the Kubernetes plan: the control-plane binaries not built yet. */
  readonly kubernetesMissing?: readonly string[];
}

export type Step =
  | { readonly kind: "apt-install"; readonly packages: readonly string[] }
  | { readonly kind: "create-venv" }
  | { readonly kind: "pip-install" }
  | { readonly kind: "configure-postgres" }
  | { readonly kind: "start-postgres" }
  | { readonly kind: "start-nats" }
  | { readonly kind: "create-test-database" }
  | { readonly kind: "build-kubernetes"; readonly artifacts: readonly string[] };

export type Plan =
  | { readonly kind: "run"; readonly steps: readonly Step[] }
  /** Something is missing that this process may not install; `message` names the command. */
  | { readonly kind: "blocked"; readonly message: string };

export interface PlanOptions {
  /** Also install, configure and start PostgreSQL and NATS (what CI needs). */
  readonly services: boolean;
  /** Whether the tests need the Python virtual environment. */
  readonly venv: boolean;
  /** Also build the Kubernetes control plane the Kubernetes suites run (docs/adr/0160). */
  readonly kubernetes?: boolean;
}

const pythonVenvPackage = "python3-venv";

export function planSetup(deps: readonly Dependency[], facts: Facts, options: PlanOptions): Plan {
  const missing = deps.filter((d) => !facts.present.has(d.debianPackage)).map((d) => d.debianPackage);
  if (options.venv && facts.venv !== "current" && !facts.pythonVenv) missing.push(pythonVenvPackage);

  const steps: Step[] = [];
  if (missing.length > 0) {
    if (!facts.root || !facts.aptGet) return { kind: "blocked", message: blockedMessage(missing, facts) };
    steps.push({ kind: "apt-install", packages: missing });
  }
  if (options.venv) {
    if (facts.venv === "missing") steps.push({ kind: "create-venv" });
    if (facts.venv !== "current") steps.push({ kind: "pip-install" });
  }
  if (options.services) {
    // Configuring comes first so that a server that is already up is reloaded with it.
    steps.push({ kind: "configure-postgres" });
    if (!facts.postgresUp) steps.push({ kind: "start-postgres" });
    if (!facts.natsUp) steps.push({ kind: "start-nats" });
    steps.push({ kind: "create-test-database" });
  }
  if (options.kubernetes && facts.kubernetesMissing && facts.kubernetesMissing.length > 0) {
    steps.push({ kind: "build-kubernetes", artifacts: facts.kubernetesMissing });
  }
  return { kind: "run", steps };
}

function blockedMessage(packages: readonly string[], facts: Facts): string {
  const list = packages.join(" ");
  if (!facts.aptGet) {
    return `setup: missing ${list} (Debian package names); install them with the system's package manager, then run npm test again`;
  }
  return `setup: missing ${list}; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${list}`;
}

/** One line saying what a step does, printed before it runs. */
export function describeStep(step: Step, deps: readonly Dependency[]): string {
  switch (step.kind) {
    case "apt-install": {
      const why = step.packages.map((p) => {
        const purpose = deps.find((d) => d.debianPackage === p)?.purpose;
        return purpose ? `${p} (${purpose})` : p;
      });
      return `setup: installing with apt-get: ${why.join(", ")}`;
    }
    case "create-venv":
      return "setup: creating the test virtual environment .venv";
    case "pip-install":
      return "setup: installing requirements-test.txt into .venv (pinned, hashes checked)";
    case "configure-postgres":
      return "setup: configuring PostgreSQL for the tests (user postgres on loopback without a password)";
    case "start-postgres":
      return "setup: starting PostgreSQL";
    case "start-nats":
      return "setup: starting nats-server with JetStream on 127.0.0.1:4222";
    case "create-test-database":
      return "setup: checking the database test exists";
    case "build-kubernetes":
      return `setup: building ${step.artifacts.join(", ")} from the Go module proxy (about 12 minutes when nothing is cached)`;
  }
}

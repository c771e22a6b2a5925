import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serviceDependencies, testDependencies } from "./dependencies.js";
import { describeStep, planSetup, type Facts } from "./plan.js";
import { testServerSettings, withLoopbackTrust } from "./postgres-config.js";
import { expandGlob } from "./probe.js";

const everything = new Set([...testDependencies, ...serviceDependencies].map((d) => d.debianPackage));

function facts(overrides: Partial<Facts> = {}): Facts {
  return { present: everything, root: true, aptGet: true, pythonVenv: true, venv: "current", ...overrides };
}

const testsOnly = { services: false, venv: true };

describe("planSetup for npm test", () => {
  it("does nothing when every package is there and the venv is current", () => {
    expect(planSetup(testDependencies, facts(), testsOnly)).toEqual({ kind: "run", steps: [] });
  });

  it("installs the missing packages, and only those, as root with apt-get", () => {
    const present = new Set(["jupyter-notebook", "openjdk-17-jre-headless"]);
    expect(planSetup(testDependencies, facts({ present }), testsOnly)).toEqual({
      kind: "run",
      steps: [{ kind: "apt-install", packages: ["bubblewrap", "gcc", "libseccomp-dev", "chromium"] }],
    });
  });

  it("names the exact apt-get command when it is not root", () => {
    const plan = planSetup(
      testDependencies,
      facts({ present: new Set(["bubblewrap", "openjdk-17-jre-headless"]), root: false }),
      testsOnly,
    );
    expect(plan).toEqual({
      kind: "blocked",
      message:
        "setup: missing gcc libseccomp-dev chromium jupyter-notebook; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends gcc libseccomp-dev chromium jupyter-notebook",
    });
  });

  it("names the packages when the machine has no apt-get", () => {
    const plan = planSetup(testDependencies, facts({ present: new Set(), aptGet: false }), testsOnly);
    expect(plan.kind).toBe("blocked");
    expect(plan.kind === "blocked" && plan.message).toMatch(
      /^setup: missing bubblewrap gcc libseccomp-dev chromium jupyter-notebook openjdk-17-jre-headless \(Debian/,
    );
  });

  it("creates the venv and installs the pinned requirements when it is missing", () => {
    expect(planSetup(testDependencies, facts({ venv: "missing" }), testsOnly)).toEqual({
      kind: "run",
      steps: [{ kind: "create-venv" }, { kind: "pip-install" }],
    });
  });

  it("reinstalls into an existing venv built from other requirements", () => {
    expect(planSetup(testDependencies, facts({ venv: "stale" }), testsOnly)).toEqual({
      kind: "run",
      steps: [{ kind: "pip-install" }],
    });
  });

  it("installs python3-venv first when python3 cannot make a venv", () => {
    expect(planSetup(testDependencies, facts({ venv: "missing", pythonVenv: false }), testsOnly)).toEqual({
      kind: "run",
      steps: [{ kind: "apt-install", packages: ["python3-venv"] }, { kind: "create-venv" }, { kind: "pip-install" }],
    });
  });

  it("does not ask for python3-venv when the venv is already current", () => {
    expect(planSetup(testDependencies, facts({ pythonVenv: false }), testsOnly)).toEqual({ kind: "run", steps: [] });
  });

  it("stops before any step when one thing cannot be installed", () => {
    const plan = planSetup(testDependencies, facts({ venv: "missing", pythonVenv: false, root: false }), testsOnly);
    expect(plan).toEqual({
      kind: "blocked",
      message:
        "setup: missing python3-venv; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends python3-venv",
    });
  });
});

describe("planSetup for CI's services", () => {
  const deps = [...testDependencies, ...serviceDependencies];
  const services = { services: true, venv: true };

  it("on a machine that never had them: installs, configures, starts both and creates the database", () => {
    const present = new Set(testDependencies.map((d) => d.debianPackage));
    expect(planSetup(deps, facts({ present, postgresUp: false, natsUp: false }), services)).toEqual({
      kind: "run",
      steps: [
        { kind: "apt-install", packages: ["postgresql", "nats-server"] },
        { kind: "configure-postgres" },
        { kind: "start-postgres" },
        { kind: "start-nats" },
        { kind: "create-test-database" },
      ],
    });
  });

  it("installed but stopped: starts both without installing", () => {
    expect(planSetup(deps, facts({ postgresUp: false, natsUp: false }), services)).toEqual({
      kind: "run",
      steps: [
        { kind: "configure-postgres" },
        { kind: "start-postgres" },
        { kind: "start-nats" },
        { kind: "create-test-database" },
      ],
    });
  });

  it("running: starts neither, only checks the configuration and the database", () => {
    expect(planSetup(deps, facts({ postgresUp: true, natsUp: true }), services)).toEqual({
      kind: "run",
      steps: [{ kind: "configure-postgres" }, { kind: "create-test-database" }],
    });
  });
});

describe("describeStep", () => {
  it("says why each package is installed, one line", () => {
    const line = describeStep({ kind: "apt-install", packages: ["bubblewrap", "python3-venv"] }, testDependencies);
    expect(line).toBe("setup: installing with apt-get: bubblewrap (sandbox isolation), python3-venv");
  });
});

describe("PostgreSQL configuration", () => {
  const debianHba = "local all postgres peer\nhost all all 127.0.0.1/32 scram-sha-256\n";

  it("puts loopback trust for postgres before Debian's password rules", () => {
    const hba = withLoopbackTrust(debianHba);
    const lines = hba.split("\n").filter((l) => l && !l.startsWith("#"));
    expect(lines[0]).toBe("host all postgres 127.0.0.1/32 trust");
    expect(lines[1]).toBe("host all postgres ::1/128 trust");
    expect(hba.endsWith(debianHba)).toBe(true);
  });

  it("adds the lines once", () => {
    expect(withLoopbackTrust(withLoopbackTrust(debianHba))).toBe(withLoopbackTrust(debianHba));
  });

  it("settings are valid postgresql.conf lines", () => {
    for (const line of testServerSettings.split("\n").filter((l) => l && !l.startsWith("#"))) {
      expect(line).toMatch(/^[a-z_]+ = [a-z0-9]+$/);
    }
  });
});

describe("expandGlob", () => {
  it("finds every version folder holding the file, in order", () => {
    const root = mkdtempSync(join(tmpdir(), "setup-glob-"));
    for (const version of ["15", "13"]) {
      mkdirSync(join(root, version, "bin"), { recursive: true });
      writeFileSync(join(root, version, "bin", "postgres"), "");
    }
    mkdirSync(join(root, "16", "bin"), { recursive: true });
    expect(expandGlob(`${root}/*/bin/postgres`)).toEqual([`${root}/13/bin/postgres`, `${root}/15/bin/postgres`]);
    expect(expandGlob(`${root}/missing/*/postgres`)).toEqual([]);
  });
});

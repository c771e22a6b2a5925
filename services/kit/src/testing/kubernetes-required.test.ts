// Whether the Kubernetes suites skip or fail when the control plane is not built: they skip on a
// developer's machine, and fail where AIEM_REQUIRE_KUBERNETES says they must run (CI).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { kubernetesArtifactPath, kubernetesArtifacts } from "./kubernetes-binaries.js";
import { kubernetesRequired, kubernetesUnavailable } from "./test-cluster.js";

describe("a missing Kubernetes control plane", () => {
  let cacheDir: string;
  beforeEach(() => {
    cacheDir = mkdtempSync(join(tmpdir(), "aiem-k8s-required-"));
  });
  afterEach(() => rmSync(cacheDir, { recursive: true, force: true }));

  it("is a reason to skip, naming the setup command, unless the suites are required", () => {
    expect(kubernetesUnavailable(cacheDir, {})).toMatch(/kube-apiserver.*missing.*npm run setup -- --kubernetes/);
    expect(kubernetesUnavailable(cacheDir, { AIEM_REQUIRE_KUBERNETES: "0" })).toMatch(/missing/);
  });

  it("fails the suite where AIEM_REQUIRE_KUBERNETES is set", () => {
    for (const value of ["1", "true"]) {
      expect(() => kubernetesUnavailable(cacheDir, { AIEM_REQUIRE_KUBERNETES: value })).toThrow(
        /AIEM_REQUIRE_KUBERNETES is set, so the Kubernetes suites may not skip: .*kube-apiserver/,
      );
    }
    expect(kubernetesRequired({ AIEM_REQUIRE_KUBERNETES: "1" })).toBe(true);
    expect(kubernetesRequired({})).toBe(false);
  });

  it("is no reason at all once every binary is built, required or not", () => {
    mkdirSync(join(cacheDir, "bin"));
    for (const { name } of kubernetesArtifacts) writeFileSync(kubernetesArtifactPath(cacheDir, name), "");
    expect(kubernetesUnavailable(cacheDir, {})).toBeUndefined();
    expect(kubernetesUnavailable(cacheDir, { AIEM_REQUIRE_KUBERNETES: "1" })).toBeUndefined();
  });
});

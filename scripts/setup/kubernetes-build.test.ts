import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  kubernetesArtifactPath,
  kubernetesCacheDir,
  missingKubernetesArtifacts,
} from "../../services/kit/src/testing/kubernetes-binaries.js";
import { testDependencies } from "./dependencies.js";
import { goIsRecentEnough, parseGoVersion, wrapperModule } from "./kubernetes-build.js";
import { describeStep, planSetup, type Facts } from "./plan.js";

const everything = new Set(testDependencies.map((d) => d.debianPackage));
const facts = (missing: readonly string[]): Facts => ({
  present: everything,
  root: true,
  aptGet: true,
  pythonVenv: true,
  venv: "current",
  kubernetesMissing: missing,
});

describe("the Kubernetes step of the setup plan", () => {
  it("builds only what is missing, and only when asked to", () => {
    const options = { services: false, venv: true, kubernetes: true };
    expect(planSetup(testDependencies, facts(["etcd", "kwok"]), options)).toEqual({
      kind: "run",
      steps: [{ kind: "build-kubernetes", artifacts: ["etcd", "kwok"] }],
    });
    expect(planSetup(testDependencies, facts([]), options)).toEqual({ kind: "run", steps: [] });
    expect(planSetup(testDependencies, facts(["etcd"]), { services: false, venv: true })).toEqual({
      kind: "run",
      steps: [],
    });
    expect(describeStep({ kind: "build-kubernetes", artifacts: ["etcd"] }, [])).toMatch(/^setup: building etcd from/);
  });
});

describe("the Kubernetes binaries cache", () => {
  it("names each file after its version and reports the ones not built", () => {
    const dir = mkdtempSync(join(tmpdir(), "aiem-k8s-cache-"));
    expect(kubernetesArtifactPath(dir, "kube-apiserver")).toBe(join(dir, "bin", "kube-apiserver-v1.35.4"));
    expect(kubernetesArtifactPath(dir, "kwok-stages")).toBe(join(dir, "bin", "kwok-stages-v0.8.0.yaml"));
    expect(missingKubernetesArtifacts(dir)).toHaveLength(7);
    mkdirSync(join(dir, "bin"));
    writeFileSync(kubernetesArtifactPath(dir, "etcd"), "");
    expect(missingKubernetesArtifacts(dir)).not.toContain("etcd");
    expect(missingKubernetesArtifacts(dir)).toHaveLength(6);
    rmSync(dir, { recursive: true });
  });

  it("lives under the user's cache directory unless AIEM_KUBERNETES_CACHE says where", () => {
    expect(kubernetesCacheDir({ AIEM_KUBERNETES_CACHE: "/x" })).toBe("/x");
    expect(kubernetesCacheDir({ XDG_CACHE_HOME: "/c" })).toBe("/c/aiem/kubernetes");
  });
});

describe("building from the Go module proxy", () => {
  it("points every staging module of kubernetes at its published v0 tag", () => {
    const kubernetesMod = [
      "module k8s.io/kubernetes",
      "",
      "replace (",
      "\tk8s.io/api => ./staging/src/k8s.io/api",
      "\tk8s.io/client-go => ./staging/src/k8s.io/client-go",
      ")",
      "",
    ].join("\n");
    const module = wrapperModule(kubernetesMod, "1.35.4");
    expect(module).toContain("require k8s.io/kubernetes v1.35.4");
    expect(module).toContain("\tk8s.io/api => k8s.io/api v0.35.4\n");
    expect(module).toContain("\tk8s.io/client-go => k8s.io/client-go v0.35.4\n");
  });

  it("reads the Go version and refuses one too old", () => {
    expect(parseGoVersion("go version go1.26.8 linux/amd64")).toEqual([1, 26]);
    expect(parseGoVersion("nothing")).toBeUndefined();
    expect(goIsRecentEnough([1, 26])).toBe(true);
    expect(goIsRecentEnough([1, 19])).toBe(false);
  });
});

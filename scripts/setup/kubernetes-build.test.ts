import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  kubernetesArtifactPath,
  kubernetesCacheDir,
  kubernetesCommands,
  kubernetesVersions,
  missingKubernetesArtifacts,
} from "../../services/kit/src/testing/kubernetes-binaries.js";
import { testDependencies } from "./dependencies.js";
import {
  buildKubernetesArtifacts,
  goIsRecentEnough,
  KubernetesBuildError,
  parseGoVersion,
  wrapperModule,
} from "./kubernetes-build.js";
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

// A stand-in for the go command that does what the build asks of it in a few milliseconds: module
// downloads leave the files the build reads, and each built package is written in two steps, the
// second skipped (exit 1) for the one named by FAKE_GO_FAIL, as a link that fails half way.
const fakeGo = `#!/bin/sh
cmd=$1; shift
case "$cmd" in
version) echo "go version go1.26.0 linux/amd64" ;;
mod)
  if [ "$1" = download ]; then
    case "$2" in k8s.io/kubernetes@*)
      d="$GOMODCACHE/cache/download/k8s.io/kubernetes/@v"; mkdir -p "$d"
      printf 'module k8s.io/kubernetes\\n' > "$d/\${2#*@}.mod" ;;
    esac
  fi
  if [ "$1" = tidy ]; then
    printf 'half' > go.sum
    case "$PWD" in *kubernetes-v*) [ "$FAKE_GO_FAIL" = kubernetes-tidy ] && exit 1 ;; esac
    printf ' sum' >> go.sum
  fi ;;
get)
  d="$GOMODCACHE/$1/kustomize/stage"
  for f in node/fast/node-initialize.yaml node/heartbeat/node-heartbeat.yaml pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
    mkdir -p "$(dirname "$d/$f")"; echo "kind: Stage" > "$d/$f"
  done ;;
build)
  while [ "$1" != -o ]; do shift; done; out=$2; shift 2
  for pkg in "$@"; do
    name=\${pkg##*/}
    case "$out" in */) target="$out$name" ;; *) target=$out ;; esac
    printf 'half' > "$target"
    if [ "$name" = "$FAKE_GO_FAIL" ]; then echo "link failed: $name" >&2; exit 1; fi
    printf ' binary' >> "$target"
  done ;;
esac
`;

describe("building the Kubernetes binaries", () => {
  let dir: string;
  let cacheDir: string;
  const saved = { GO: process.env.GO, FAKE_GO_FAIL: process.env.FAKE_GO_FAIL };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "aiem-k8s-build-"));
    cacheDir = join(dir, "cache");
    writeFileSync(join(dir, "go"), fakeGo);
    chmodSync(join(dir, "go"), 0o755);
    process.env.GO = join(dir, "go");
  });
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("makes the Kubernetes module again when its go mod tidy was cut short", async () => {
    process.env.FAKE_GO_FAIL = "kubernetes-tidy";
    await expect(buildKubernetesArtifacts(cacheDir, ["kubectl"])).rejects.toThrow(/go mod tidy failed/);
    delete process.env.FAKE_GO_FAIL;
    await buildKubernetesArtifacts(cacheDir, ["kubectl"]);
    const sum = join(cacheDir, "src", `kubernetes-v${kubernetesVersions.kubernetes}`, "go.sum");
    expect(readFileSync(sum, "utf8")).toBe("half sum");
    expect(missingKubernetesArtifacts(cacheDir)).not.toContain("kubectl");
  });

  it("leaves nothing that looks built when a build fails, and the next run builds only what is missing", async () => {
    process.env.FAKE_GO_FAIL = "kube-scheduler";
    const everything = missingKubernetesArtifacts(cacheDir);
    await expect(buildKubernetesArtifacts(cacheDir, everything)).rejects.toThrow(KubernetesBuildError);
    // The other jobs finished; none of the one build of the Kubernetes commands counts, not even
    // the commands it had written before it failed.
    expect(missingKubernetesArtifacts(cacheDir)).toEqual([...kubernetesCommands]);
    expect(readFileSync(kubernetesArtifactPath(cacheDir, "etcd"), "utf8")).toBe("half binary");
    expect(readFileSync(kubernetesArtifactPath(cacheDir, "kwok-stages"), "utf8")).toMatch(/^---\nkind: Stage/);

    delete process.env.FAKE_GO_FAIL;
    await buildKubernetesArtifacts(cacheDir, missingKubernetesArtifacts(cacheDir));
    expect(missingKubernetesArtifacts(cacheDir)).toEqual([]);
    for (const command of kubernetesCommands) {
      expect(readFileSync(kubernetesArtifactPath(cacheDir, command), "utf8")).toBe("half binary");
    }
    // Only the named files are left in bin: no staging directory, no partial file.
    expect(readdirSync(join(cacheDir, "bin")).sort()).toEqual(
      everything.map((name) => kubernetesArtifactPath(cacheDir, name).split("/").pop()).sort(),
    );
  });
});

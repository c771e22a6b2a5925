// Builds the Kubernetes control plane the Kubernetes suites run (kube-apiserver,
// kube-controller-manager, kube-scheduler, kubectl, etcd, kwok) from the Go module proxy into the
// cache, one file per name and version; what is there already is kept (docs/adr/0160).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  kubernetesArtifactPath,
  kubernetesCommands,
  kubernetesVersions,
  type KubernetesArtifact,
} from "../../services/kit/src/testing/kubernetes-binaries.js";
import { findCommand } from "./probe.js";

export class KubernetesBuildError extends Error {
  override readonly name = "KubernetesBuildError";
}

/** The oldest Go that builds Kubernetes 1.35 (its go.mod); a newer one fetches what it needs. */
const minimumGo = [1, 21] as const;

/** `GO`, `go` on PATH, or the official tarball's place; undefined when there is none. */
export function findGo(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = [env.GO, findCommand("go"), "/usr/local/go/bin/go"];
  return candidates.find((c): c is string => !!c && existsSync(c));
}

/** `go1.26.8` -> [1, 26]; undefined when the output is not a Go version. */
export function parseGoVersion(output: string): readonly [number, number] | undefined {
  const match = /go(\d+)\.(\d+)/.exec(output);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

export function goIsRecentEnough(version: readonly [number, number]): boolean {
  return version[0] > minimumGo[0] || (version[0] === minimumGo[0] && version[1] >= minimumGo[1]);
}

export function buildKubernetesArtifacts(cacheDir: string, missing: readonly KubernetesArtifact[]): void {
  const go = findGo();
  if (!go) {
    throw new KubernetesBuildError(
      "setup: building the Kubernetes test binaries needs Go 1.21 or newer (https://go.dev/dl/); install it, or set GO to its go command",
    );
  }
  const version = parseGoVersion(spawnSync(go, ["version"], { encoding: "utf8" }).stdout ?? "");
  if (!version || !goIsRecentEnough(version)) {
    throw new KubernetesBuildError(`setup: ${go} is older than Go 1.21; Kubernetes needs a newer Go`);
  }
  const builder = createBuilder(go, cacheDir);
  mkdirSync(join(cacheDir, "bin"), { recursive: true });
  const commands = missing.filter((name) => name.startsWith("kube"));
  if (missing.includes("etcd")) builder.etcd();
  if (missing.includes("kwok")) builder.kwok();
  if (missing.includes("kwok-stages")) builder.kwokStages();
  if (commands.length > 0) builder.kubernetes(commands);
}

function createBuilder(go: string, cacheDir: string) {
  const env = {
    ...process.env,
    GOMODCACHE: join(cacheDir, "go", "mod"),
    GOCACHE: join(cacheDir, "go", "build"),
    CGO_ENABLED: "0",
    GOFLAGS: "-buildvcs=false",
  };
  const goRun = (dir: string, args: readonly string[]): void => {
    // Lowest priority: the build takes minutes of both cores on a small machine.
    const result = spawnSync("nice", ["-n", "19", go, ...args], { cwd: dir, env, stdio: "inherit" });
    if (result.status !== 0) {
      throw new KubernetesBuildError(`setup: go ${args.join(" ")} failed in ${dir} (exit ${result.status})`);
    }
  };
  const sourceDir = (name: string): string => {
    const dir = join(cacheDir, "src", name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  // A binary appears under its final name only once complete, so a build cut short is redone.
  const buildTo = (dir: string, artifact: KubernetesArtifact, pkg: string, ldflags = "-s -w"): void => {
    const target = kubernetesArtifactPath(cacheDir, artifact);
    console.log(`setup: building ${artifact} (${pkg})`);
    goRun(dir, ["build", "-trimpath", `-ldflags=${ldflags}`, "-o", `${target}.partial`, pkg]);
    renameSync(`${target}.partial`, target);
  };
  const tools = (imports: readonly string[]): string =>
    `//go:build tools\n\npackage tools\n\nimport (\n${imports.map((i) => `\t_ "${i}"\n`).join("")})\n`;

  return {
    etcd(): void {
      const v = kubernetesVersions.etcd;
      const dir = sourceDir(`etcd-v${v}`);
      // etcd's server module points its sibling modules at ../api etc.; pin them to the same tag.
      const siblings = ["api/v3", "client/pkg/v3", "client/v3", "pkg/v3"];
      const replaces = siblings.map((s) => `\tgo.etcd.io/etcd/${s} => go.etcd.io/etcd/${s} v${v}\n`).join("");
      writeFileSync(
        join(dir, "go.mod"),
        `module local/etcdbuild\n\ngo 1.24\n\nrequire go.etcd.io/etcd/server/v3 v${v}\n\nreplace (\n${replaces})\n`,
      );
      writeFileSync(join(dir, "tools.go"), tools(["go.etcd.io/etcd/server/v3"]));
      goRun(dir, ["mod", "tidy"]);
      buildTo(dir, "etcd", "go.etcd.io/etcd/server/v3");
    },
    kwok(): void {
      const dir = sourceDir(`kwok-v${kubernetesVersions.kwok}`);
      writeFileSync(join(dir, "go.mod"), `module local/kwokbuild\n\ngo 1.24\n`);
      writeFileSync(join(dir, "tools.go"), tools(["sigs.k8s.io/kwok/cmd/kwok"]));
      goRun(dir, ["get", `sigs.k8s.io/kwok@v${kubernetesVersions.kwok}`]);
      goRun(dir, ["mod", "tidy"]);
      buildTo(dir, "kwok", "sigs.k8s.io/kwok/cmd/kwok");
    },
    kwokStages(): void {
      const dir = sourceDir(`kwok-v${kubernetesVersions.kwok}`);
      goRun(dir, ["mod", "download", `sigs.k8s.io/kwok@v${kubernetesVersions.kwok}`]);
      const stageDir = join(env.GOMODCACHE, `sigs.k8s.io/kwok@v${kubernetesVersions.kwok}`, "kustomize", "stage");
      const files = [
        "node/fast/node-initialize.yaml",
        "node/heartbeat/node-heartbeat.yaml",
        "pod/fast/pod-ready.yaml",
        "pod/fast/pod-complete.yaml",
        "pod/fast/pod-delete.yaml",
      ];
      const text = files.map((f) => `---\n${readFileSync(join(stageDir, f), "utf8")}`).join("\n");
      writeFileSync(kubernetesArtifactPath(cacheDir, "kwok-stages"), text);
    },
    kubernetes(commands: readonly KubernetesArtifact[]): void {
      const v = kubernetesVersions.kubernetes;
      const dir = sourceDir(`kubernetes-v${v}`);
      if (!existsSync(join(dir, "go.sum"))) {
        goRun(dir, ["mod", "download", `k8s.io/kubernetes@v${v}`]);
        const kubernetesMod = readFileSync(
          join(env.GOMODCACHE, "cache", "download", "k8s.io", "kubernetes", "@v", `v${v}.mod`),
          "utf8",
        );
        writeFileSync(join(dir, "go.mod"), wrapperModule(kubernetesMod, v));
        writeFileSync(join(dir, "tools.go"), tools(kubernetesCommands.map((c) => `k8s.io/kubernetes/cmd/${c}`)));
        goRun(dir, ["mod", "tidy"]);
      }
      for (const command of commands) buildTo(dir, command, `k8s.io/kubernetes/cmd/${command}`, versionLdflags(v));
    },
  };
}

/**
 * A module requiring k8s.io/kubernetes whose staging modules (`k8s.io/x => ./staging/src/k8s.io/x`
 * in kubernetes' own go.mod) point at their published tags, v0.Y.Z for Kubernetes v1.Y.Z.
 */
export function wrapperModule(kubernetesGoMod: string, version: string): string {
  const stagingTag = `v0.${version.split(".").slice(1).join(".")}`;
  const block = /^replace \(\n([\s\S]*?)^\)/m.exec(kubernetesGoMod)?.[1] ?? "";
  const replaces = block
    .split("\n")
    .filter((line) => line.includes("=>"))
    .map((line) => line.trim().split(/\s+/)[0])
    .map((module) => `\t${module} => ${module} ${stagingTag}\n`)
    .join("");
  return `module local/kbuild\n\ngo 1.25.0\n\nrequire k8s.io/kubernetes v${version}\n\nreplace (\n${replaces})\n`;
}

/** Stamps the version that `/version` and `kubectl version` report (otherwise v0.0.0-master). */
function versionLdflags(version: string): string {
  const minor = version.split(".")[1] ?? "0";
  const packages = ["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"];
  const flags = packages.flatMap((p) => [
    `-X ${p}.gitVersion=v${version}`,
    `-X ${p}.gitMajor=1`,
    `-X ${p}.gitMinor=${minor}`,
    `-X ${p}.gitTreeState=clean`,
  ]);
  return ["-s -w", ...flags].join(" ");
}

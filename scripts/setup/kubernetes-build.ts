// Builds the Kubernetes control plane the Kubernetes suites run (kube-apiserver,
// kube-controller-manager, kube-scheduler, kubectl, etcd, kwok) from the Go module proxy into the
// cache, one file per name and version; what is there already is kept (docs/adr/0160).
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
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

/**
 * Builds the missing artifacts. The three module graphs (etcd, kwok, Kubernetes) build at once:
 * one's downloads and links overlap the others' compiles, and the Go module and build caches they
 * share are safe for concurrent go commands (they lock what they write). One that fails lets the
 * others finish, so that the next run builds only what is still missing.
 */
export async function buildKubernetesArtifacts(
  cacheDir: string,
  missing: readonly KubernetesArtifact[],
): Promise<void> {
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
  const jobs: Promise<void>[] = [];
  if (missing.includes("etcd")) jobs.push(builder.etcd());
  if (missing.includes("kwok") || missing.includes("kwok-stages")) {
    jobs.push(builder.kwok({ binary: missing.includes("kwok"), stages: missing.includes("kwok-stages") }));
  }
  if (commands.length > 0) jobs.push(builder.kubernetes(commands));
  const failures = (await Promise.allSettled(jobs)).flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
  if (failures.length > 0) {
    const messages = failures.map((f) => (f instanceof Error ? f.message : String(f)));
    throw new KubernetesBuildError(messages.join("\n"));
  }
}

function createBuilder(go: string, cacheDir: string) {
  const env = {
    ...process.env,
    GOMODCACHE: join(cacheDir, "go", "mod"),
    GOCACHE: join(cacheDir, "go", "build"),
    CGO_ENABLED: "0",
    GOFLAGS: "-buildvcs=false",
  };
  // Lowest priority: the build takes minutes of every core on a small machine. Each line is
  // prefixed with the job's name, since the jobs run at once.
  const goRun = (job: string, dir: string, args: readonly string[]): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn("nice", ["-n", "19", go, ...args], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
      const relay = (from: NodeJS.ReadableStream, to: NodeJS.WritableStream) =>
        createInterface({ input: from, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) =>
          to.write(`[${job}] ${line}\n`),
        );
      relay(child.stdout, process.stdout);
      relay(child.stderr, process.stderr);
      child.once("error", reject);
      child.once("close", (code, signal) => {
        if (code === 0) resolve();
        else
          reject(
            new KubernetesBuildError(`setup: go ${args.join(" ")} failed in ${dir} (${signal ?? `exit ${code}`})`),
          );
      });
    });
  const sourceDir = (name: string): string => {
    const dir = join(cacheDir, "src", name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  // A file appears under its final name only once complete, so a build cut short is redone.
  const buildTo = async (dir: string, artifact: KubernetesArtifact, pkg: string): Promise<void> => {
    const target = kubernetesArtifactPath(cacheDir, artifact);
    console.log(`setup: building ${artifact} (${pkg})`);
    await goRun(artifact, dir, ["build", "-trimpath", "-ldflags=-s -w", "-o", `${target}.partial`, pkg]);
    renameSync(`${target}.partial`, target);
  };
  const tools = (imports: readonly string[]): string =>
    `//go:build tools\n\npackage tools\n\nimport (\n${imports.map((i) => `\t_ "${i}"\n`).join("")})\n`;

  return {
    async etcd(): Promise<void> {
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
      await goRun("etcd", dir, ["mod", "tidy"]);
      await buildTo(dir, "etcd", "go.etcd.io/etcd/server/v3");
    },
    /** kwok's stage definitions (copied from its module) and its binary; one job, since they share a module. */
    async kwok(what: { readonly binary: boolean; readonly stages: boolean }): Promise<void> {
      const v = kubernetesVersions.kwok;
      const dir = sourceDir(`kwok-v${v}`);
      writeFileSync(join(dir, "go.mod"), `module local/kwokbuild\n\ngo 1.24\n`);
      writeFileSync(join(dir, "tools.go"), tools(["sigs.k8s.io/kwok/cmd/kwok"]));
      await goRun("kwok", dir, ["get", `sigs.k8s.io/kwok@v${v}`]);
      if (what.stages) {
        const stageDir = join(env.GOMODCACHE, `sigs.k8s.io/kwok@v${v}`, "kustomize", "stage");
        const files = [
          "node/fast/node-initialize.yaml",
          "node/heartbeat/node-heartbeat.yaml",
          "pod/fast/pod-ready.yaml",
          "pod/fast/pod-complete.yaml",
          "pod/fast/pod-delete.yaml",
        ];
        const text = files.map((f) => `---\n${readFileSync(join(stageDir, f), "utf8")}`).join("\n");
        const target = kubernetesArtifactPath(cacheDir, "kwok-stages");
        writeFileSync(`${target}.partial`, text);
        renameSync(`${target}.partial`, target);
      }
      if (what.binary) {
        await goRun("kwok", dir, ["mod", "tidy"]);
        await buildTo(dir, "kwok", "sigs.k8s.io/kwok/cmd/kwok");
      }
    },
    /** The Kubernetes commands in one go build: its packages compile once and the links overlap. */
    async kubernetes(commands: readonly KubernetesArtifact[]): Promise<void> {
      const v = kubernetesVersions.kubernetes;
      const dir = sourceDir(`kubernetes-v${v}`);
      // The wrapper module is made once; the mark is written only after `go mod tidy` succeeded,
      // so a tidy cut short (its go.sum half written) is done again.
      const moduleReady = join(dir, ".module-ready");
      if (!existsSync(moduleReady)) {
        await goRun("kubernetes", dir, ["mod", "download", `k8s.io/kubernetes@v${v}`]);
        const kubernetesMod = readFileSync(
          join(env.GOMODCACHE, "cache", "download", "k8s.io", "kubernetes", "@v", `v${v}.mod`),
          "utf8",
        );
        writeFileSync(join(dir, "go.mod"), wrapperModule(kubernetesMod, v));
        writeFileSync(join(dir, "tools.go"), tools(kubernetesCommands.map((c) => `k8s.io/kubernetes/cmd/${c}`)));
        await goRun("kubernetes", dir, ["mod", "tidy"]);
        writeFileSync(moduleReady, "");
      }
      // Into a directory of their own, then each renamed: what a cut-short build left there is not trusted.
      const staging = join(cacheDir, "bin", `kubernetes-v${v}.partial`);
      rmSync(staging, { recursive: true, force: true });
      mkdirSync(staging);
      console.log(`setup: building ${commands.join(", ")} (k8s.io/kubernetes/cmd/...)`);
      const packages = commands.map((c) => `k8s.io/kubernetes/cmd/${c}`);
      await goRun("kubernetes", dir, [
        "build",
        "-trimpath",
        `-ldflags=${versionLdflags(v)}`,
        "-o",
        `${staging}/`,
        ...packages,
      ]);
      for (const command of commands) renameSync(join(staging, command), kubernetesArtifactPath(cacheDir, command));
      rmSync(staging, { recursive: true, force: true });
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

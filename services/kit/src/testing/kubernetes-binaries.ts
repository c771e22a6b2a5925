// Where `npm run setup -- --kubernetes` puts the control-plane binaries the Kubernetes suites run,
// and which versions: one list shared by the build step and the test harness (docs/adr/0160).
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** The pinned versions, built from their Go modules; changing one rebuilds only that binary. */
export const kubernetesVersions = { kubernetes: "1.35.4", etcd: "3.6.16", kwok: "0.8.0" } as const;

export const kubernetesCommands = ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"] as const;

export type KubernetesArtifact = (typeof kubernetesCommands)[number] | "etcd" | "kwok" | "kwok-stages";

/** Every file the harness needs, each with the version it is built from. */
export const kubernetesArtifacts: readonly { readonly name: KubernetesArtifact; readonly version: string }[] = [
  ...kubernetesCommands.map((name) => ({ name, version: kubernetesVersions.kubernetes })),
  { name: "etcd", version: kubernetesVersions.etcd },
  { name: "kwok", version: kubernetesVersions.kwok },
  // kwok's own stage definitions (nodes become Ready, pods Running), taken from its module.
  { name: "kwok-stages", version: kubernetesVersions.kwok },
];

/** `AIEM_KUBERNETES_CACHE`, or `aiem/kubernetes` under the user's cache directory. */
export function kubernetesCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.AIEM_KUBERNETES_CACHE;
  if (explicit) return explicit;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "aiem", "kubernetes");
}

export function kubernetesArtifactPath(cacheDir: string, name: KubernetesArtifact): string {
  const artifact = kubernetesArtifacts.find((a) => a.name === name);
  if (!artifact) throw new Error(`unknown Kubernetes artifact ${name}`);
  const suffix = name === "kwok-stages" ? ".yaml" : "";
  return join(cacheDir, "bin", `${name}-v${artifact.version}${suffix}`);
}

/** The artifacts not built yet, in the order they are built. */
export function missingKubernetesArtifacts(cacheDir: string): KubernetesArtifact[] {
  return kubernetesArtifacts.map((a) => a.name).filter((name) => !existsSync(kubernetesArtifactPath(cacheDir, name)));
}

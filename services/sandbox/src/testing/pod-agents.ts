// What a kubelet would run in each sandbox pod of the test cluster, which kwok does not: the real
// static agent, as the pod's container, serving on the pod's IP (a loopback address the test
// cluster hands out: TestCluster.podCidr) with the configuration the pod was given (its Secret's
// file, as the container would read it), and its files under a directory of its own (the pod's
// filesystem). It ends when its pod goes, as the
// container would; the sandbox service then reaches it exactly as it would in a cluster.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { type CoreV1Api, type KubeConfig, makeInformer, type V1Pod } from "@kubernetes/client-node";
import { sandboxSelector } from "../kubernetes/sandbox-informers.js";
import { agentPort } from "../kubernetes/sandbox-objects.js";
import { buildGoAgent } from "../runtime/go-agent-build.js";

export interface PodAgent {
  readonly host: string;
  readonly port: number;
  /** The directory standing in for the pod's filesystem (the agent's root). */
  readonly root: string;
}

export interface PodAgents {
  /** Resolves once the agent of the sandbox's current pod serves. */
  ready(uid: string): Promise<PodAgent>;
  stop(): Promise<void>;
}

interface Running {
  readonly uid: string;
  readonly root: string;
  /** Set once the agent is spawned (after the previous agent on the same address ended). */
  child?: ChildProcess;
  readonly served: Promise<PodAgent>;
  /** Resolves once the agent ended (or never started). */
  readonly exited: Promise<void>;
}

/**
 * The agent's configuration as the pod would see it: the file its sandbox container's
 * AIEM_AGENT_CONFIG_FILE names, from the Secret mounted at that file's directory.
 */
async function podAgentConfig(core: CoreV1Api, namespace: string, pod: V1Pod): Promise<Record<string, unknown>> {
  const container = pod.spec?.containers.find((c) => c.name === "sandbox");
  const file = container?.env?.find((e) => e.name === "AIEM_AGENT_CONFIG_FILE")?.value ?? "";
  const mount = container?.volumeMounts?.find((m) => m.mountPath === dirname(file));
  const secretName = pod.spec?.volumes?.find((v) => v.name === mount?.name)?.secret?.secretName;
  if (!secretName) throw new Error(`pod ${pod.metadata?.name} mounts no Secret at ${file}`);
  const secret = await core.readNamespacedSecret({ namespace, name: secretName });
  const content = secret.data?.[basename(file)];
  if (!content) throw new Error(`Secret ${secretName} has no ${basename(file)}`);
  return JSON.parse(Buffer.from(content, "base64").toString()) as Record<string, unknown>;
}

/** Follows the sandbox pods of `namespace` and runs an agent for each one kwok makes Running. */
export async function startPodAgents(
  k8s: { readonly config: KubeConfig; readonly core: CoreV1Api },
  namespace: string,
): Promise<PodAgents> {
  const built = await buildGoAgent();
  if (!built.path) throw new Error(`the agent could not be built: ${built.reason}`);
  const agentPath = built.path;
  const byPod = new Map<string, Running>();
  const waiters = new Map<string, ((agent: Promise<PodAgent>) => void)[]>();
  // A new pod may get the address of one just deleted: its agent starts once the old one ended.
  const byHost = new Map<string, Running>();

  function start(pod: V1Pod): void {
    const podUid = pod.metadata?.uid ?? "";
    const uid = pod.metadata?.labels?.["app.kubernetes.io/instance"] ?? "";
    const host = pod.status?.podIP;
    if (!host || byPod.has(podUid)) return;
    const root = mkdtempSync(join(tmpdir(), "aiem-pod-"));
    const before = byHost.get(host)?.exited ?? Promise.resolve();
    const config = podAgentConfig(k8s.core, namespace, pod);
    let ended: () => void = () => {};
    const exited = new Promise<void>((resolve) => (ended = resolve));
    const served = Promise.all([config, before]).then(
      ([settings]) =>
        new Promise<PodAgent>((resolve, reject) => {
          // In a pod `:50051` is the pod's own address; here every pod shares the host's network.
          const file = join(root, ".aiem-config.json");
          const local = { ...settings, listen: `${host}:${agentPort}`, root, ensureDirs: true };
          writeFileSync(file, JSON.stringify(local), { mode: 0o400 });
          const child = spawn(agentPath, [], {
            env: { PATH: process.env.PATH ?? "/usr/bin:/bin", AIEM_AGENT_CONFIG_FILE: file },
            stdio: ["ignore", "pipe", "pipe"],
          });
          running.child = child;
          let stderr = "";
          child.stderr?.on("data", (chunk) => (stderr += String(chunk)));
          child.stdout?.on("data", (chunk) => {
            if (String(chunk).includes("ready")) resolve({ host, port: agentPort, root });
          });
          child.once("exit", (code) => {
            ended();
            reject(new Error(`the agent of ${uid} ended (${code}): ${stderr}`));
          });
        }),
    );
    served.catch(() => ended());
    const running: Running = { uid, root, served, exited };
    byPod.set(podUid, running);
    byHost.set(host, running);
    for (const waiter of waiters.get(uid) ?? []) waiter(served);
    waiters.delete(uid);
  }

  async function end(podUid: string): Promise<void> {
    const running = byPod.get(podUid);
    if (!running) return;
    byPod.delete(podUid);
    await running.served.catch(() => undefined);
    running.child?.kill("SIGTERM");
    await running.exited;
    rmSync(running.root, { recursive: true, force: true });
  }

  const informer = makeInformer<V1Pod>(
    k8s.config,
    `/api/v1/namespaces/${namespace}/pods`,
    () => k8s.core.listNamespacedPod({ namespace, labelSelector: sandboxSelector }),
    sandboxSelector,
  );
  const changed = (pod: V1Pod) => {
    if (pod.metadata?.deletionTimestamp || pod.status?.phase !== "Running") void end(pod.metadata?.uid ?? "");
    else start(pod);
  };
  informer.on("add", changed);
  informer.on("update", changed);
  informer.on("delete", (pod) => void end(pod.metadata?.uid ?? ""));
  await informer.start();

  return {
    ready(uid) {
      for (const running of byPod.values()) if (running.uid === uid) return running.served;
      return new Promise<Promise<PodAgent>>((resolve) => {
        waiters.set(uid, [...(waiters.get(uid) ?? []), resolve]);
      }).then((served) => served);
    },
    async stop() {
      await informer.stop();
      await Promise.all([...byPod.keys()].map(end));
    },
  };
}

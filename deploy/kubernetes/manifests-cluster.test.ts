// The manifests applied to a real control plane with kwok nodes: each layout renders with the
// cluster's own `kubectl kustomize`, its Deployments become Available, each runtime's Role holds
// exactly the calls that runtime makes and its ServiceAccount can do nothing else, and only the
// pods that call the API carry a token, each its runtime's. kwok runs no containers, so what the image does inside
// them (probes answering, configuration read) is not exercised here.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { kubernetesArtifactPath, kubernetesCacheDir, kubernetesUnavailable, type TestCluster } from "@aiem/kit/testing";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubernetesRuntime } from "../../services/engine/src/runtime/kubernetes/kubernetes-runtime.js";
import type { EngineRuntime, EngineStatus } from "../../services/engine/src/runtime/runtime.js";
import { daiRunSpec } from "../../services/engine/src/testing/run-spec.js";
import { createKubernetesSandboxRuntime } from "../../services/sandbox/src/kubernetes/kubernetes-sandbox-runtime.js";
import { startSandboxCluster, untilSandbox } from "../../services/sandbox/src/testing/kubernetes-cluster.js";
import { sandboxPod } from "../../services/sandbox/src/kubernetes/sandbox-objects.js";
import { grantsOf, type RoleRule, runtimeApiCalls } from "./runtime-api-calls.js";

const unavailable = kubernetesUnavailable();
if (unavailable) console.warn(`skipping the Kubernetes manifests' tests: ${unavailable}`);

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");

interface Pod {
  metadata: { labels?: Record<string, string> };
  spec: { serviceAccountName?: string; volumes?: { name: string; projected?: unknown }[] };
}

interface Container {
  livenessProbe?: { httpGet?: unknown };
  readinessProbe?: { httpGet?: unknown };
  startupProbe?: { httpGet?: unknown };
  envFrom?: unknown[];
  env?: { name: string; valueFrom?: unknown }[];
}

interface NetworkPolicySpec {
  podSelector: { matchLabels?: Record<string, string> };
  ingress: {
    from?: { podSelector: { matchExpressions?: { key: string; values: string[] }[] } }[];
    ports?: { protocol: string; port: number; endPort?: number }[];
  }[];
}

/** A sandbox as the runtime would run it, for the labels of its pod. */
const sandboxSpec = {
  uid: "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e",
  name: "workspaces/w/sandboxEngines/s",
  creator: "users/u",
  creatorDisplayName: "U",
  image: "example.invalid/sandbox:1",
  memoryBytesLimit: 1n << 30n,
  gpu: 0,
};

interface Deployment {
  metadata: { name: string };
  spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } } };
}

/** Resolves once the engine's status satisfies `done`, checked now and on every change the runtime reports. */
function until(runtime: EngineRuntime, uid: string, done: (status: EngineStatus) => boolean): Promise<EngineStatus> {
  return new Promise((resolve, reject) => {
    let unwatch = () => {};
    const check = () =>
      runtime.inspect(uid).then((status) => {
        if (!done(status)) return;
        unwatch();
        resolve(status);
      }, reject);
    unwatch = runtime.watch((changed) => {
      if (changed === uid) void check();
    });
    void check();
  });
}

/**
 * Renders an overlay into a namespace of its own the way a user's overlay would: a kustomization
 * elsewhere that names ours as its resource and sets the namespace.
 */
function render(kustomization: string, namespace: string): string {
  const dir = mkdtempSync(join(tmpdir(), "aiem-kustomize-"));
  try {
    writeFileSync(
      join(dir, "kustomization.yaml"),
      [
        "apiVersion: kustomize.config.k8s.io/v1beta1",
        "kind: Kustomization",
        `namespace: ${namespace}`,
        "resources:",
        // kustomize takes only relative paths to other kustomizations.
        `  - ${relative(dir, join(here, kustomization))}`,
        "",
      ].join("\n"),
    );
    return execFileSync(kubernetesArtifactPath(kubernetesCacheDir(), "kubectl"), ["kustomize", dir], {
      encoding: "utf8",
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Secrets the manifests expect the operator to make; kwok never reads their values. */
function secrets(namespace: string): string {
  const key = Buffer.alloc(32, 7).toString("base64");
  return [
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "aiem", namespace },
      stringData: {
        DATABASE_URL: "postgres://aiem@postgres.example:5432/aiem",
        NATS_URL: "nats://nats.example:4222",
        AIEM_INTERNAL_KEY: key,
        AIEM_PAGE_TOKEN_KEY: key,
        AIEM_SECRETS_KEY: key,
      },
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "aiem-signing-key", namespace },
      stringData: { "token-signing-key.jwk.json": "{}" },
    },
  ]
    .map((s) => JSON.stringify(s))
    .join("\n---\n");
}

/** The API's users of the split layouts: each runtime's part with its own ServiceAccount. */
const splitAccounts = { engine: "aiem-runtime", sandbox: "aiem-sandbox-runtime" };

// `accounts`: the ServiceAccount of each part (by its component label) that calls the API; the
// one process of all-in-one runs both runtimes with the engine's, which holds both Roles.
const layouts = [
  {
    name: "split",
    path: "overlays/split",
    deployments: ["aiem-catalogue", "aiem-edge", "aiem-engine", "aiem-sandbox"],
    accounts: splitAccounts,
    engineAccount: "aiem-runtime",
    sandboxAccount: "aiem-sandbox-runtime",
    sandboxes: "aiem-sandbox",
  },
  {
    name: "all-in-one",
    path: "overlays/all-in-one",
    deployments: ["aiem"],
    accounts: { "all-in-one": "aiem-runtime" },
    engineAccount: "aiem-runtime",
    sandboxAccount: "aiem-runtime",
    sandboxes: "aiem",
  },
  {
    name: "try",
    path: "examples/try",
    deployments: ["aiem-catalogue", "aiem-edge", "aiem-engine", "aiem-sandbox", "nats", "postgres"],
    accounts: splitAccounts,
    engineAccount: "aiem-runtime",
    sandboxAccount: "aiem-sandbox-runtime",
    sandboxes: "aiem-sandbox",
  },
] as const;

/** A client configuration that holds only `account`'s token, for the apiserver the admin reaches. */
function tokenConfig(cluster: TestCluster, account: string, namespace: string): KubeConfig {
  const token = cluster.kubectl(["create", "token", account, "-n", namespace]).trim();
  const admin = new KubeConfig();
  admin.loadFromFile(cluster.kubeconfigPath);
  const server = admin.getCurrentCluster();
  if (!server) throw new Error("the test kubeconfig names no cluster");
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [server],
    users: [{ name: account, token }],
    contexts: [{ name: account, cluster: server.name, user: account }],
    currentContext: account,
  });
  return config;
}

describe.skipIf(unavailable !== undefined)("the Kubernetes manifests on a real control plane", () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    // With the Gateway API's HTTPRoute CRD (the sandbox suites' stand-in), so that the sandbox
    // runtime's route calls are made here too.
    cluster = (await startSandboxCluster("aiem-routes-ready")).cluster;
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  describe.each(layouts)(
    "the $name layout",
    ({ name, path, deployments, accounts, engineAccount, sandboxAccount, sandboxes }) => {
      const namespace = `aiem-${name}`;
      const api = Object.keys(accounts);
      const canI = (account: string, verb: string, resource: string, inNamespace = namespace): boolean => {
        const [type = "", subresource] = resource.split("/");
        const args = [
          "auth",
          "can-i",
          verb,
          type,
          "-n",
          inNamespace,
          `--as=system:serviceaccount:${namespace}:${account}`,
        ];
        try {
          return cluster.kubectl(subresource ? [...args, `--subresource=${subresource}`] : args).trim() === "yes";
        } catch (error) {
          // `can-i` exits 1 when the answer is no.
          if ((error as { stdout?: string }).stdout?.trim() === "no") return false;
          throw error;
        }
      };

      beforeAll(() => {
        cluster.kubectl(["apply", "-f", "-"], `${render(path, namespace)}\n---\n${secrets(namespace)}`);
        // Engines' pods run as the namespace's default ServiceAccount, which its controller makes.
        cluster.kubectl(["wait", "--for=create", "-n", namespace, "serviceaccount/default", "--timeout=60s"]);
      }, 60_000);

      it("has its Deployments become Available on kwok nodes", () => {
        const names = cluster.kubectl(["get", "deployments", "-n", namespace, "-o", "name"]).trim().split("\n");
        expect(names.sort()).toEqual(deployments.map((d) => `deployment.apps/${d}`));
        cluster.kubectl([
          "wait",
          "--for=condition=Available",
          "deployment",
          "--all",
          "-n",
          namespace,
          "--timeout=120s",
        ]);
        const pods = JSON.parse(cluster.kubectl(["get", "pods", "-n", namespace, "-o", "json"])).items as unknown[];
        expect(pods.length).toBeGreaterThanOrEqual(deployments.length);
      }, 150_000);

      it("probes each part on its health routes and configures it from the Secret and the ConfigMap", () => {
        const items = JSON.parse(cluster.kubectl(["get", "deployments", "-n", namespace, "-o", "json"]))
          .items as Deployment[];
        const ours = items.filter((d) => d.metadata.name.startsWith("aiem"));
        expect(ours).toHaveLength(deployments.filter((d) => d.startsWith("aiem")).length);
        const config = JSON.parse(
          cluster.kubectl([
            "get",
            "configmap",
            "-n",
            namespace,
            "-l",
            "app.kubernetes.io/part-of=ai-engine-manager",
            "-o",
            "json",
          ]),
        ).items[0].data as Record<string, string>;
        expect(config).toMatchObject({
          AIEM_ENGINE_RUNTIME: "kubernetes",
          AIEM_SANDBOX_RUNTIME: "kubernetes",
          AIEM_HOST: "0.0.0.0",
        });
        for (const deployment of ours) {
          const [container] = deployment.spec.template.spec.containers;
          expect(container?.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "http", scheme: "HTTP" });
          expect(container?.startupProbe?.httpGet).toEqual({ path: "/healthz", port: "http", scheme: "HTTP" });
          expect(container?.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "http", scheme: "HTTP" });
          expect(container?.envFrom).toEqual([
            { configMapRef: { name: expect.stringMatching(/^aiem-config-/) } },
            { secretRef: { name: "aiem" } },
          ]);
          const callsTheApi = api.includes(
            deployment.spec.template.metadata.labels["app.kubernetes.io/component"] ?? "",
          );
          const namespaceVariable = container?.env?.find((e) => e.name === "AIEM_KUBERNETES_NAMESPACE");
          if (callsTheApi)
            expect(namespaceVariable?.valueFrom).toEqual({
              fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" },
            });
          else expect(namespaceVariable).toBeUndefined();
        }
      });

      it("admits to sandbox agents only the pods of the Deployment that runs sandboxes", () => {
        const policy = JSON.parse(
          cluster.kubectl(["get", "networkpolicy", "aiem-sandbox-agents", "-n", namespace, "-o", "json"]),
        ) as { spec: NetworkPolicySpec };
        // It selects the pods the sandbox runtime makes.
        const selected = Object.entries(policy.spec.podSelector.matchLabels ?? {});
        const podLabels = sandboxPod(sandboxSpec, namespace, { image: "agent", config: "{}" }).metadata?.labels ?? {};
        for (const [key, value] of selected) expect(podLabels[key], key).toBe(value);
        // The agent's port from the sandbox service's pods, as the cluster reads the selector.
        const [agentRule, otherPorts] = policy.spec.ingress;
        expect(agentRule?.ports).toEqual([{ protocol: "TCP", port: 50051 }]);
        const selector = (agentRule?.from?.[0]?.podSelector.matchExpressions ?? [])
          .map((e) => `${e.key} in (${e.values.join(",")})`)
          .join(",");
        const admitted = JSON.parse(cluster.kubectl(["get", "pods", "-n", namespace, "-l", selector, "-o", "json"]))
          .items as { metadata: { name: string } }[];
        expect(admitted.length).toBeGreaterThan(0);
        for (const pod of admitted) expect(pod.metadata.name).toMatch(new RegExp(`^${sandboxes}-[a-z0-9]+-[a-z0-9]+$`));
        // Every other port open to anyone.
        expect(otherPorts?.from).toBeUndefined();
        expect(otherPorts?.ports).toContainEqual({ protocol: "TCP", port: 1, endPort: 50050 });
        expect(otherPorts?.ports).toContainEqual({ protocol: "TCP", port: 50052, endPort: 65535 });
      });

      it("gives each runtime's Role exactly the calls that runtime makes", () => {
        for (const [role, service] of [
          ["aiem-runtime", "engine"],
          ["aiem-sandbox-runtime", "sandbox"],
        ] as const) {
          const rules = JSON.parse(cluster.kubectl(["get", "role", role, "-n", namespace, "-o", "json"]))
            .rules as RoleRule[];
          const needed = [...new Set(runtimeApiCalls(root, [service]).calls.map((c) => c.grant))].sort();
          expect(grantsOf(rules), role).toEqual(needed);
        }
      });

      it("lets each runtime's ServiceAccount make its objects in its namespace and nothing else", () => {
        for (const account of new Set([engineAccount, sandboxAccount])) {
          expect(canI(account, "create", "pods")).toBe(true);
          expect(canI(account, "watch", "pods")).toBe(true);
          expect(canI(account, "delete", "services")).toBe(true);
          expect(canI(account, "get", "secrets")).toBe(false);
          expect(canI(account, "create", "deployments.apps")).toBe(false);
          expect(canI(account, "create", "pods/exec")).toBe(false);
          expect(canI(account, "create", "pods", "default")).toBe(false);
          expect(canI(account, "list", "nodes")).toBe(false);
        }
        expect(canI(engineAccount, "get", "pods/log")).toBe(true);
        expect(canI(engineAccount, "patch", "persistentvolumeclaims")).toBe(true);
        expect(canI(sandboxAccount, "create", "httproutes.gateway.networking.k8s.io")).toBe(true);
        // A sandbox's agent configuration is made as a Secret, never read back.
        expect(canI(sandboxAccount, "create", "secrets")).toBe(true);
        if (engineAccount !== sandboxAccount) {
          // Each holds only its own runtime's rights.
          expect(canI(sandboxAccount, "get", "pods/log")).toBe(false);
          expect(canI(sandboxAccount, "create", "persistentvolumeclaims")).toBe(false);
          expect(canI(engineAccount, "create", "httproutes.gateway.networking.k8s.io")).toBe(false);
          expect(canI(engineAccount, "create", "secrets")).toBe(false);
        }
      });

      it("lets the sandbox runtime carry a sandbox and a public port with its ServiceAccount's token alone", async () => {
        const runtime = await createKubernetesSandboxRuntime({
          config: tokenConfig(cluster, sandboxAccount, namespace),
          namespace,
          agent: { image: "example.invalid/aiem-agent:1", config: "{}" },
          agentToken: async (uid) => `token-of-${uid}`,
        });
        try {
          expect(runtime.routes).toBe(true);
          const uid = "6a7b8c9d-0e1f-4a2b-9c3d-4e5f6a7b8c9d";
          await runtime.start({
            uid,
            name: "workspaces/w1/sandboxEngines/s1",
            creator: "users/alice",
            creatorDisplayName: "Alice",
            image: "example.invalid/sandbox:1",
            memoryBytesLimit: 64n << 20n,
            gpu: 0,
          });
          await untilSandbox(runtime, uid, (s) => s.state === "running");
          await runtime.ensurePort(uid, 9090, { publicUrl: `https://9090-${uid}.sandboxes.example.com/` });
          expect(runtime.portReady(uid, 9090, true)).toBe(true);
          await runtime.removePort(uid, 9090);
          await runtime.remove(uid);
          expect(runtime.status(uid)).toEqual({ state: "absent" });
        } finally {
          await runtime.close();
        }
      }, 120_000);

      it("lets the engine runtime carry an engine through its life with the ServiceAccount's token alone", async () => {
        // The token a pod of the engine service would hold.
        const config = tokenConfig(cluster, engineAccount, namespace);
        const runtime = await createKubernetesRuntime({ config, namespace });
        try {
          const uid = "4f5a6b7c-8d9e-4f0a-9b1c-2d3e4f5a6b7c";
          await runtime.start(daiRunSpec(uid));
          await until(runtime, uid, (s) => s.phase === "ready" && s.dataPresent);
          await runtime.logs(uid, 1024);
          // The apiserver authorizes a call before it reads the body: any answer but 403 shows the
          // Role allows the resize, whether or not the patch itself is well formed.
          await runtime
            .resizeStorage(uid, 2n << 30n)
            .catch((error: { code?: number }) => expect(error.code).not.toBe(403));
          await runtime.stop(uid);
          await until(runtime, uid, (s) => s.phase === "stopped" && s.dataPresent);
          await runtime.start(daiRunSpec(uid));
          await until(runtime, uid, (s) => s.phase === "ready");
          await runtime.remove(uid);
          await until(runtime, uid, (s) => s.phase === "absent" && !s.dataPresent);
        } finally {
          await runtime.close();
        }
      }, 120_000);

      it("mounts the API token only where the runtime runs", () => {
        const pods = JSON.parse(cluster.kubectl(["get", "pods", "-n", namespace, "-o", "json"])).items as Pod[];
        const withToken = pods
          .filter((p) => p.spec.volumes?.some((v) => v.name.startsWith("kube-api-access-")))
          .map((p) => p.metadata.labels?.["app.kubernetes.io/component"]);
        const runtimePods = pods.filter((p) => api.includes(p.metadata.labels?.["app.kubernetes.io/component"] ?? ""));
        expect(runtimePods.length).toBeGreaterThan(0);
        expect(new Set(withToken)).toEqual(new Set(api));
        for (const pod of runtimePods) {
          const component = pod.metadata.labels?.["app.kubernetes.io/component"] ?? "";
          expect(pod.spec.serviceAccountName).toBe((accounts as Record<string, string>)[component]);
        }
      });
    },
  );
});

// The manifests applied to a real control plane with kwok nodes: each layout renders with the
// cluster's own `kubectl kustomize`, its Deployments become Available, the runtime's Role holds
// exactly the calls the runtimes make and its ServiceAccount can do nothing else, and only the
// pods that call the API carry its token. kwok runs no containers, so what the image does inside
// them (probes answering, configuration read) is not exercised here.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import {
  kubernetesArtifactPath,
  kubernetesCacheDir,
  kubernetesUnavailable,
  startTestCluster,
  type TestCluster,
} from "@aiem/kit/testing";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKubernetesRuntime } from "../../services/engine/src/runtime/kubernetes/kubernetes-runtime.js";
import type { EngineRuntime, EngineStatus } from "../../services/engine/src/runtime/runtime.js";
import { daiRunSpec } from "../../services/engine/src/testing/run-spec.js";
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

const layouts = [
  {
    name: "split",
    path: "overlays/split",
    deployments: ["aiem-catalogue", "aiem-edge", "aiem-engine", "aiem-sandbox"],
    api: ["engine"],
    sandboxes: "aiem-sandbox",
  },
  {
    name: "all-in-one",
    path: "overlays/all-in-one",
    deployments: ["aiem"],
    api: ["all-in-one"],
    sandboxes: "aiem",
  },
  {
    name: "try",
    path: "examples/try",
    deployments: ["aiem-catalogue", "aiem-edge", "aiem-engine", "aiem-sandbox", "nats", "postgres"],
    api: ["engine"],
    sandboxes: "aiem-sandbox",
  },
] as const;

describe.skipIf(unavailable !== undefined)("the Kubernetes manifests on a real control plane", () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await startTestCluster();
  }, 180_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  describe.each(layouts)("the $name layout", ({ name, path, deployments, api, sandboxes }) => {
    const namespace = `aiem-${name}`;
    const serviceAccount = `system:serviceaccount:${namespace}:aiem-runtime`;
    const canI = (verb: string, resource: string, inNamespace = namespace): boolean => {
      const [type = "", subresource] = resource.split("/");
      const args = ["auth", "can-i", verb, type, "-n", inNamespace, `--as=${serviceAccount}`];
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
      cluster.kubectl(["wait", "--for=condition=Available", "deployment", "--all", "-n", namespace, "--timeout=120s"]);
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
      expect(config).toMatchObject({ AIEM_ENGINE_RUNTIME: "kubernetes", AIEM_HOST: "0.0.0.0" });
      for (const deployment of ours) {
        const [container] = deployment.spec.template.spec.containers;
        expect(container?.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "http", scheme: "HTTP" });
        expect(container?.startupProbe?.httpGet).toEqual({ path: "/healthz", port: "http", scheme: "HTTP" });
        expect(container?.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "http", scheme: "HTTP" });
        expect(container?.envFrom).toEqual([
          { configMapRef: { name: expect.stringMatching(/^aiem-config-/) } },
          { secretRef: { name: "aiem" } },
        ]);
        const runsEngines = (api as readonly string[]).includes(
          deployment.spec.template.metadata.labels["app.kubernetes.io/component"] ?? "",
        );
        const namespaceVariable = container?.env?.find((e) => e.name === "AIEM_KUBERNETES_NAMESPACE");
        if (runsEngines)
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

    it("gives the runtime's Role exactly the calls the runtimes make", () => {
      const role = JSON.parse(cluster.kubectl(["get", "role", "aiem-runtime", "-n", namespace, "-o", "json"])) as {
        rules: RoleRule[];
      };
      const needed = [...new Set(runtimeApiCalls(root).calls.map((c) => c.grant))].sort();
      expect(grantsOf(role.rules)).toEqual(needed);
    });

    it("lets the runtime's ServiceAccount make engines' objects in its namespace and nothing else", () => {
      expect(canI("create", "pods")).toBe(true);
      expect(canI("watch", "pods")).toBe(true);
      expect(canI("get", "pods/log")).toBe(true);
      expect(canI("patch", "persistentvolumeclaims")).toBe(true);
      expect(canI("delete", "services")).toBe(true);
      expect(canI("create", "secrets")).toBe(true);
      expect(canI("get", "secrets")).toBe(false);
      expect(canI("create", "deployments.apps")).toBe(false);
      expect(canI("create", "pods/exec")).toBe(false);
      expect(canI("create", "pods", "default")).toBe(false);
      expect(canI("list", "nodes")).toBe(false);
    });

    it("lets the engine runtime carry an engine through its life with the ServiceAccount's token alone", async () => {
      // The token a pod of the engine service would hold, for the apiserver the admin reaches.
      const token = cluster.kubectl(["create", "token", "aiem-runtime", "-n", namespace]).trim();
      const admin = new KubeConfig();
      admin.loadFromFile(cluster.kubeconfigPath);
      const server = admin.getCurrentCluster();
      if (!server) throw new Error("the test kubeconfig names no cluster");
      const config = new KubeConfig();
      config.loadFromOptions({
        clusters: [server],
        users: [{ name: "aiem-runtime", token }],
        contexts: [{ name: "aiem-runtime", cluster: server.name, user: "aiem-runtime" }],
        currentContext: "aiem-runtime",
      });
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
      const runtimePods = pods.filter((p) =>
        (api as readonly string[]).includes(p.metadata.labels?.["app.kubernetes.io/component"] ?? ""),
      );
      expect(runtimePods.length).toBeGreaterThan(0);
      expect(new Set(withToken)).toEqual(new Set(api));
      for (const pod of runtimePods) expect(pod.spec.serviceAccountName).toBe("aiem-runtime");
    });
  });
});

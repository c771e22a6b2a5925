// The manifests' files as written, without a cluster (the cluster test needs the Kubernetes
// binaries and skips without them): every part is probed on its health routes, configured from
// the Secret and the ConfigMap, and only the parts that run engines hold the API token.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));

interface Container {
  command?: string[];
  livenessProbe?: { httpGet?: { path?: string; port?: string } };
  readinessProbe?: { httpGet?: { path?: string; port?: string } };
  startupProbe?: { httpGet?: { path?: string; port?: string } };
  envFrom?: unknown[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  ports?: { name: string; containerPort: number }[];
}

interface Deployment {
  kind: string;
  metadata: { name: string };
  spec: {
    template: {
      spec: {
        serviceAccountName?: string;
        automountServiceAccountToken?: boolean;
        securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
        containers: Container[];
      };
    };
  };
}

function deploymentsOf(overlay: string): Deployment[] {
  const dir = join(here, "overlays", overlay);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .flatMap((f) => parseAllDocuments(readFileSync(join(dir, f), "utf8")).map((d) => d.toJS() as Deployment))
    .filter((o) => o?.kind === "Deployment");
}

const layouts = [
  {
    overlay: "split",
    parts: { "aiem-edge": "edge", "aiem-catalogue": "catalogue", "aiem-engine": "engine", "aiem-sandbox": "sandbox" },
  },
  { overlay: "all-in-one", parts: { aiem: undefined } },
] as const;

describe.each(layouts)("the $overlay layout's Deployments", ({ overlay, parts }) => {
  const deployments = deploymentsOf(overlay);

  it("run each part of the product once", () => {
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(Object.keys(parts).sort());
    for (const d of deployments) {
      const part = (parts as Record<string, string | undefined>)[d.metadata.name];
      expect(d.spec.template.spec.containers[0]?.command).toEqual(
        part ? ["node", "edge/src/start-service.js", part] : ["node", "edge/src/main.js"],
      );
    }
  });

  it("probe /healthz and /readyz and read the Secret and the ConfigMap", () => {
    for (const d of deployments) {
      const [container] = d.spec.template.spec.containers;
      expect(container?.ports).toContainEqual({ name: "http", containerPort: 8080 });
      expect(container?.startupProbe?.httpGet).toEqual({ path: "/healthz", port: "http" });
      expect(container?.livenessProbe?.httpGet).toEqual({ path: "/healthz", port: "http" });
      expect(container?.readinessProbe?.httpGet).toEqual({ path: "/readyz", port: "http" });
      expect(container?.envFrom).toEqual([{ configMapRef: { name: "aiem-config" } }, { secretRef: { name: "aiem" } }]);
    }
  });

  it("give the API token only to the parts that run engines, which learn their namespace", () => {
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const runsEngines = d.metadata.name === "aiem-engine" || d.metadata.name === "aiem";
      const namespace = pod.containers[0]?.env?.find((e) => e.name === "AIEM_KUBERNETES_NAMESPACE");
      if (runsEngines) {
        expect(pod.serviceAccountName).toBe("aiem-runtime");
        expect(namespace?.valueFrom).toEqual({ fieldRef: { fieldPath: "metadata.namespace" } });
      } else {
        expect(pod.serviceAccountName).toBeUndefined();
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(namespace).toBeUndefined();
      }
    }
  });

  it("run as the image's unprivileged user, except where sandboxes run", () => {
    for (const d of deployments) {
      const runsSandboxes = d.metadata.name === "aiem-sandbox" || d.metadata.name === "aiem";
      expect(d.spec.template.spec.securityContext?.runAsNonRoot).toBe(runsSandboxes ? undefined : true);
      expect(d.spec.template.spec.securityContext?.runAsUser).toBe(runsSandboxes ? 0 : 10001);
    }
  });
});

describe("the ConfigMap", () => {
  it("runs engines on Kubernetes and listens beyond loopback", () => {
    const settings = Object.fromEntries(
      readFileSync(join(here, "base/config.env"), "utf8")
        .split("\n")
        .filter((line) => line && !line.startsWith("#"))
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    expect(settings).toMatchObject({ AIEM_ENGINE_RUNTIME: "kubernetes", AIEM_HOST: "0.0.0.0", AIEM_DATA_DIR: "/data" });
    // Secret values belong in the Secret `aiem`, never in the ConfigMap.
    for (const name of ["DATABASE_URL", "NATS_URL", "AIEM_INTERNAL_KEY", "AIEM_PAGE_TOKEN_KEY", "AIEM_SECRETS_KEY"]) {
      expect(settings).not.toHaveProperty(name);
    }
  });
});

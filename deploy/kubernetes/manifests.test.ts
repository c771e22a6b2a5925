// The manifests' files as written, without a cluster (the cluster test needs the Kubernetes
// binaries and skips without them): every part is probed on its health routes, configured from
// the Secret and the ConfigMap, and only the parts that run engines or sandboxes hold an API
// token, each its runtime's.
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
        securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type?: string } };
        containers: (Container & { securityContext?: { allowPrivilegeEscalation?: boolean } })[];
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

  it("give an API token only to the parts that run engines or sandboxes, which learn their namespace", () => {
    // The one process of the all-in-one layout runs both runtimes with the engine's account.
    const accounts: Record<string, string> = {
      "aiem-engine": "aiem-runtime",
      "aiem-sandbox": "aiem-sandbox-runtime",
      aiem: "aiem-runtime",
    };
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const account = accounts[d.metadata.name];
      const namespace = pod.containers[0]?.env?.find((e) => e.name === "AIEM_KUBERNETES_NAMESPACE");
      if (account) {
        expect(pod.serviceAccountName).toBe(account);
        expect(pod.automountServiceAccountToken).toBe(true);
        expect(namespace?.valueFrom).toEqual({ fieldRef: { fieldPath: "metadata.namespace" } });
      } else {
        expect(pod.serviceAccountName).toBeUndefined();
        expect(pod.automountServiceAccountToken).toBe(false);
        expect(namespace).toBeUndefined();
      }
    }
  });

  it("run as the image's unprivileged user with the default seccomp profile and no privilege to gain", () => {
    // Sandboxes are pods of their own, so no part needs more.
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot).toBe(true);
      expect(pod.securityContext?.runAsUser).toBe(10001);
      expect(pod.securityContext?.seccompProfile?.type).toBe("RuntimeDefault");
      expect(pod.containers[0]?.securityContext?.allowPrivilegeEscalation).toBe(false);
    }
  });
});

describe("the split layout's sandbox service", () => {
  const documents = parseAllDocuments(readFileSync(join(here, "overlays/split/sandbox.yaml"), "utf8")).map(
    (d) => d.toJS() as SandboxObject,
  );
  const deployment = documents.find((d) => d.kind === "Deployment");
  const claims = documents.filter((d) => d.kind === "PersistentVolumeClaim");

  it("runs replicas that roll, each mounting the drive's ReadWriteMany claim where AIEM_DRIVE_DIR says", () => {
    expect(deployment?.spec.replicas).toBeGreaterThanOrEqual(2);
    // Recreate would take every replica down at once.
    expect(deployment?.spec.strategy?.type ?? "RollingUpdate").toBe("RollingUpdate");
    const pod = deployment?.spec.template.spec;
    const [container] = pod?.containers ?? [];
    const driveDir = container?.env?.find((e) => e.name === "AIEM_DRIVE_DIR")?.value;
    const mount = container?.volumeMounts?.find((m) => m.mountPath === driveDir);
    const volume = pod?.volumes?.find((v) => v.name === mount?.name);
    const claim = claims.find((c) => c.metadata.name === volume?.persistentVolumeClaim?.claimName);
    expect(claim?.spec.accessModes).toEqual(["ReadWriteMany"]);
    // The data directory holds nothing another replica needs, so it is the pod's own.
    const data = pod?.volumes?.find(
      (v) => v.name === container?.volumeMounts?.find((m) => m.mountPath === "/data")?.name,
    );
    expect(data?.emptyDir).toEqual({});
    expect(claims).toHaveLength(1);
  });
});

interface SandboxObject {
  kind: string;
  metadata: { name: string };
  spec: {
    replicas?: number;
    strategy?: { type?: string };
    accessModes?: string[];
    template: {
      spec: {
        containers: (Container & { volumeMounts?: { name: string; mountPath: string }[] })[];
        volumes?: { name: string; emptyDir?: object; persistentVolumeClaim?: { claimName: string } }[];
      };
    };
  };
}

describe("the ConfigMap", () => {
  it("runs engines and sandboxes on Kubernetes and listens beyond loopback", () => {
    const settings = Object.fromEntries(
      readFileSync(join(here, "base/config.env"), "utf8")
        .split("\n")
        .filter((line) => line && !line.startsWith("#"))
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    expect(settings).toMatchObject({
      AIEM_ENGINE_RUNTIME: "kubernetes",
      AIEM_SANDBOX_RUNTIME: "kubernetes",
      // The image `npm run build:agent-image` builds, under the name an operator pushes it as.
      AIEM_SANDBOX_AGENT_IMAGE: "aiem-agent:latest",
      AIEM_HOST: "0.0.0.0",
      AIEM_DATA_DIR: "/data",
    });
    // Secret values belong in the Secret `aiem`, never in the ConfigMap.
    for (const name of ["DATABASE_URL", "NATS_URL", "AIEM_INTERNAL_KEY", "AIEM_PAGE_TOKEN_KEY", "AIEM_SECRETS_KEY"]) {
      expect(settings).not.toHaveProperty(name);
    }
  });
});

import { describe, expect, it } from "vitest";
import { daiRunSpec } from "../../testing/run-spec.js";
import type { EngineRunSpec } from "../runtime.js";
import { engineObjects } from "./engine-objects.js";
import { placementOf } from "./placement.js";

const uid = "3f2b8c1e-0d4a-4f6e-9b7a-1c2d3e4f5a6b";

const daiSpec = (overrides: Partial<EngineRunSpec> = {}): EngineRunSpec =>
  daiRunSpec(uid, {
    name: "workspaces/w1/daiEngines/e1",
    storageBytes: 2n << 30n,
    config: { key1: "val1" },
    ...overrides,
  });

describe("the objects of a DAI engine", () => {
  const { claim, pod, service } = engineObjects(daiSpec(), "workloads");

  it("names the pod, claim and Service engine-<uid> in the workloads namespace", () => {
    for (const object of [claim, pod, service]) {
      expect(object.metadata?.name).toBe(`engine-${uid}`);
      expect(object.metadata?.namespace).toBe("workloads");
    }
  });

  it("labels each object as the real service's operator does", () => {
    for (const object of [claim, pod, service]) {
      expect(object.metadata?.labels).toEqual({
        "app.kubernetes.io/name": "dai-engine",
        "app.kubernetes.io/instance": uid,
        "app.kubernetes.io/managed-by": "engine-operator",
        "app.kubernetes.io/created-by": "engine-operator",
      });
      expect(object.metadata?.annotations).toMatchObject({
        "engine.h2o.ai/version": "1.11.0",
        "engine.h2o.ai/gpu-resource-name": "nvidia.com/gpu",
      });
    }
  });

  it("runs the version's image in a container driverless-ai with its configuration as variables", () => {
    expect(pod.spec?.containers).toHaveLength(1);
    const container = pod.spec?.containers[0];
    expect(container?.name).toBe("driverless-ai");
    expect(container?.image).toBe("example.invalid/dai:1.11.0");
    expect(container?.env).toEqual([
      { name: "DRIVERLESS_AI_KEY1", value: "val1" },
      { name: "DRIVERLESS_AI_OVERRIDE_VIRTUAL_CORES", value: "1" },
    ]);
    expect(container?.resources).toEqual({
      requests: { cpu: "1", memory: String(1 << 30) },
      limits: { cpu: "1", memory: String(1 << 30) },
    });
    expect(container?.volumeMounts).toEqual([{ name: "data", mountPath: "/data" }]);
    expect(pod.spec?.volumes).toEqual([{ name: "data", persistentVolumeClaim: { claimName: `engine-${uid}` } }]);
    expect(pod.spec?.restartPolicy).toBe("Never");
    expect(pod.spec?.automountServiceAccountToken).toBe(false);
  });

  it("claims the engine's storage, in the cluster's default class unless the profile names one", () => {
    expect(claim.spec?.resources?.requests).toEqual({ storage: String(2 * (1 << 30)) });
    expect(claim.spec?.accessModes).toEqual(["ReadWriteOnce"]);
    expect(claim.spec?.storageClassName).toBeUndefined();
    const named = engineObjects(daiSpec(), "w", { storageClassName: "fast" }).claim;
    expect(named.spec?.storageClassName).toBe("fast");
  });

  it("selects the pod by its instance label from a ClusterIP Service", () => {
    expect(service.spec?.type).toBe("ClusterIP");
    expect(service.spec?.selector).toEqual({ "app.kubernetes.io/instance": uid });
    expect(service.spec?.ports).toEqual([{ name: "http", port: 12345, targetPort: 12345, protocol: "TCP" }]);
  });

  it("has the pod and Service owned by the claim once the claim exists", () => {
    const owned = engineObjects(
      daiSpec(),
      "w",
      {},
      { kind: "PersistentVolumeClaim", name: `engine-${uid}`, uid: "c1" },
    );
    for (const object of [owned.pod, owned.service]) {
      expect(object.metadata?.ownerReferences).toEqual([
        { apiVersion: "v1", kind: "PersistentVolumeClaim", name: `engine-${uid}`, uid: "c1", blockOwnerDeletion: true },
      ]);
    }
    expect(owned.claim.metadata?.ownerReferences).toBeUndefined();
  });
});

describe("placement settings in the pod", () => {
  it("requests GPUs as the profile's resource, with the version's pull policy and secrets", () => {
    const { pod, claim } = engineObjects(daiSpec({ gpu: 2 }), "w", {
      gpuResourceName: "amd.com/gpu",
      imagePullPolicy: "Always",
      imagePullSecrets: ["regcred"],
    });
    const container = pod.spec?.containers[0];
    expect(container?.resources?.limits).toMatchObject({ "amd.com/gpu": "2" });
    expect(container?.resources?.requests).toMatchObject({ "amd.com/gpu": "2" });
    expect(container?.imagePullPolicy).toBe("Always");
    expect(pod.spec?.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(claim.metadata?.annotations?.["engine.h2o.ai/gpu-resource-name"]).toBe("amd.com/gpu");
  });

  const podTemplate = {
    metadata: { labels: { "profile-label": "profile-value" }, annotations: { "custom-key": "custom-value" } },
    spec: {
      containers: [
        {
          name: "driverless-ai",
          env: [
            { name: "CUSTOM_VAR", value: "CUSTOM_VAL" },
            { name: "DRIVERLESS_AI_OVERRIDE_VIRTUAL_CORES", value: "20" },
          ],
        },
        { name: "custom-container", image: "example.invalid/side", ports: [{ containerPort: 21212 }] },
      ],
      tolerations: [{ key: "dedicated", operator: "Equal", value: "steam", effect: "NoSchedule" }],
      nodeSelector: { pool: "engines" },
    },
  };
  const gpuTolerations = [{ key: "gpu", operator: "Equal", value: "value1", effect: "NoSchedule" }];

  it("merges the profile's pod template: containers and variables by name, the template winning", () => {
    const { pod } = engineObjects(daiSpec(), "w", { podTemplate, gpuTolerations });
    expect(pod.metadata?.annotations?.["custom-key"]).toBe("custom-value");
    expect(pod.metadata?.labels?.["profile-label"]).toBe("profile-value");
    expect(pod.spec?.containers.map((c) => c.name)).toEqual(["driverless-ai", "custom-container"]);
    const env = pod.spec?.containers[0]?.env ?? [];
    expect(env.find((e) => e.name === "CUSTOM_VAR")?.value).toBe("CUSTOM_VAL");
    expect(env.find((e) => e.name === "DRIVERLESS_AI_OVERRIDE_VIRTUAL_CORES")?.value).toBe("20");
    expect(env.find((e) => e.name === "DRIVERLESS_AI_KEY1")?.value).toBe("val1");
    expect(pod.spec?.containers[0]?.image).toBe("example.invalid/dai:1.11.0");
    expect(pod.spec?.containers[1]?.ports).toEqual([{ containerPort: 21212 }]);
    expect(pod.spec?.nodeSelector).toEqual({ pool: "engines" });
    // Without GPUs the GPU tolerations do not apply and the template's stay.
    expect(pod.spec?.tolerations).toEqual(podTemplate.spec.tolerations);
  });

  it("replaces the template's tolerations by the GPU tolerations when the engine has GPUs", () => {
    const { pod } = engineObjects(daiSpec({ gpu: 1 }), "w", { podTemplate, gpuTolerations });
    expect(pod.spec?.tolerations).toEqual(gpuTolerations);
  });

  it("keeps our labels when the template sets the same keys, so the Service still selects the pod", () => {
    const clash = { metadata: { labels: { "app.kubernetes.io/instance": "other" } } };
    const { pod } = engineObjects(daiSpec(), "w", { podTemplate: clash });
    expect(pod.metadata?.labels?.["app.kubernetes.io/instance"]).toBe(uid);
  });
});

describe("the objects of a notebook engine", () => {
  it("runs Jupyter under the engine's path with its home on the claim", () => {
    const spec = daiSpec({ kind: "notebook", version: "python", image: "example.invalid/nb", config: {} });
    const { pod, service } = engineObjects(spec, "w");
    expect(pod.metadata?.labels?.["app.kubernetes.io/name"]).toBe("notebook-engine");
    const container = pod.spec?.containers[0];
    expect(container?.name).toBe("notebook");
    expect(container?.env).toEqual([
      { name: "NOTEBOOK_ARGS", value: `--ServerApp.base_url=/engines/${uid}/ --IdentityProvider.token=` },
    ]);
    expect(container?.volumeMounts).toEqual([{ name: "data", mountPath: "/home/jovyan" }]);
    expect(pod.spec?.securityContext).toEqual({ fsGroup: 100 });
    expect(service.spec?.ports?.[0]?.port).toBe(8888);
  });

  it("refuses H2O engines, which are a cluster of pods", () => {
    expect(() => engineObjects(daiSpec({ kind: "h2o" }), "w")).toThrow(/H2O/);
  });
});

describe("placement settings from the catalogue", () => {
  it("parses the profile's YAML and maps the version's pull policy", () => {
    expect(
      placementOf({
        yamlPodTemplateSpec: "metadata:\n  labels:\n    a: b\nspec:\n  nodeSelector:\n    pool: gpu\n",
        yamlGpuTolerations: "- key: gpu\n  operator: Exists\n",
        gpuResourceName: "amd.com/gpu",
        storageClassName: "",
        imagePullPolicy: 3,
        imagePullSecrets: ["regcred"],
      }),
    ).toEqual({
      podTemplate: { metadata: { labels: { a: "b" } }, spec: { nodeSelector: { pool: "gpu" } } },
      gpuTolerations: [{ key: "gpu", operator: "Exists" }],
      gpuResourceName: "amd.com/gpu",
      imagePullPolicy: "IfNotPresent",
      imagePullSecrets: ["regcred"],
    });
    expect(placementOf({ imagePullPolicy: 0, imagePullSecrets: [] })).toEqual({});
  });
});

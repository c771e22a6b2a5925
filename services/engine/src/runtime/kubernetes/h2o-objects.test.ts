import { describe, expect, it } from "vitest";
import { daiRunSpec } from "../../testing/run-spec.js";
import { h2oNodeHost, h2oObjects } from "./h2o-objects.js";

const uid = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
const spec = daiRunSpec(uid, {
  kind: "h2o",
  name: "workspaces/w1/h2oEngines/e1",
  version: "3.46.0.7",
  image: "example.invalid/h2o:3.46.0.7",
  cpu: 2,
  memoryBytes: 4n << 30n,
  nodeCount: 3,
  options: { javaOptions: "-XX:+UseG1GC", h2oOptions: "-allow_insecure_xgboost", javaClasspath: "/extra/lib.jar" },
});

describe("the objects of an H2O engine", () => {
  const { service, pods } = h2oObjects(spec, "workloads", {}, { kind: "Service", name: `engine-${uid}`, uid: "s-1" });

  it("makes one pod per node, engine-<uid>-<i>, owned by the Service", () => {
    expect(pods.map((p) => p.metadata?.name)).toEqual([0, 1, 2].map((i) => `engine-${uid}-${i}`));
    for (const [index, pod] of pods.entries()) {
      expect(pod.metadata?.namespace).toBe("workloads");
      expect(pod.metadata?.labels).toEqual({
        "app.kubernetes.io/name": "h2o-engine",
        "app.kubernetes.io/instance": uid,
        "app.kubernetes.io/managed-by": "engine-operator",
        "app.kubernetes.io/created-by": "engine-operator",
        "apps.kubernetes.io/pod-index": String(index),
      });
      expect(pod.metadata?.annotations).toMatchObject({
        "engine.h2o.ai/name": "workspaces/w1/h2oEngines/e1",
        "engine.h2o.ai/version": "3.46.0.7",
        "engine.h2o.ai/node-count": "3",
      });
      expect(pod.metadata?.ownerReferences).toEqual([
        { apiVersion: "v1", kind: "Service", name: `engine-${uid}`, uid: "s-1", blockOwnerDeletion: true },
      ]);
      // A stable name per node under the headless Service, as a StatefulSet gives.
      expect(pod.spec?.hostname).toBe(`engine-${uid}-${index}`);
      expect(pod.spec?.subdomain).toBe(`engine-${uid}`);
      expect(pod.spec?.restartPolicy).toBe("Never");
    }
  });

  it("forms the cloud through a headless Service that publishes nodes before they are ready", () => {
    expect(service.metadata?.name).toBe(`engine-${uid}`);
    expect(service.spec?.clusterIP).toBe("None");
    expect(service.spec?.publishNotReadyAddresses).toBe(true);
    expect(service.spec?.selector).toEqual({ "app.kubernetes.io/instance": uid });
    const env = Object.fromEntries((pods[0]?.spec?.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      H2O_KUBERNETES_SERVICE_DNS: `engine-${uid}.workloads.svc.cluster.local`,
      H2O_NODE_EXPECTED_COUNT: "3",
    });
    expect(h2oNodeHost(uid, 0, "workloads")).toBe(`engine-${uid}-0.engine-${uid}.workloads.svc`);
  });

  it("runs H2O-3 with the heap from memory, the profile's options and the engine's path", () => {
    const container = pods[0]?.spec?.containers[0];
    expect(container?.name).toBe("h2o");
    expect(container?.image).toBe("example.invalid/h2o:3.46.0.7");
    const command = container?.command ?? [];
    expect(command.slice(0, 2)).toEqual(["java", "-Xmx4096m"]);
    expect(command).toContain("-XX:+UseG1GC");
    expect(command[command.indexOf("-cp") + 1]).toBe("/opt/h2oai/h2o-3/h2o.jar:/extra/lib.jar");
    expect(command[command.indexOf("-context_path") + 1]).toBe(`/engines/${uid}`);
    expect(command[command.indexOf("-nthreads") + 1]).toBe("2");
    expect(command.at(-1)).toBe("-allow_insecure_xgboost");
    expect(container?.resources).toEqual({
      requests: { cpu: "2", memory: String(4 * (1 << 30)) },
      limits: { cpu: "2", memory: String(4 * (1 << 30)) },
    });
  });

  it("lays the profile's pod template over every node", () => {
    const { pods: templated } = h2oObjects(spec, "w", {
      podTemplate: { spec: { nodeSelector: { pool: "h2o" } } },
      imagePullPolicy: "IfNotPresent",
      imagePullSecrets: ["regcred"],
    });
    for (const pod of templated) {
      expect(pod.spec?.nodeSelector).toEqual({ pool: "h2o" });
      expect(pod.spec?.containers[0]?.imagePullPolicy).toBe("IfNotPresent");
      expect(pod.spec?.imagePullSecrets).toEqual([{ name: "regcred" }]);
    }
  });
});

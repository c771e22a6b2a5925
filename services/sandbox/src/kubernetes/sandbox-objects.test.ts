import { clone, create } from "@bufbuild/protobuf";
import { SandboxEngineSchema } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import { describe, expect, it } from "vitest";
import {
  agentConfigSecret,
  labelValue,
  portRoute,
  portService,
  sandboxPod,
  sandboxService,
} from "./sandbox-objects.js";
import { h2oCloudEnvironment } from "./h2o-cloud-environment.js";
import { sandboxPodSpecOf } from "./sandbox-pod-spec.js";
import { SMALL_SANDBOX } from "../testing/fixtures.js";

const uid = "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d";
const engine = create(SandboxEngineSchema, {
  name: "workspaces/8cf6b17d/sandboxEngines/s1",
  uid,
  creator: "users/5e7f",
  creatorDisplayName: "Alice",
  sandboxEngineImageInfo: { image: "registry.example/sandbox:1", imagePullPolicy: 3, imagePullSecrets: ["regcred"] },
  sandboxEngineTemplateInfo: {
    ...SMALL_SANDBOX,
    gpu: 1,
    gpuResource: "amd.com/gpu",
    yamlPodTemplateSpec: [
      "metadata:",
      "  labels: { team: ml }",
      "spec:",
      "  nodeSelector: { pool: sandboxes }",
      "  containers:",
      "    - name: sandbox",
      "      env: [{ name: POD_TEMPLATE_TEST_VAR, value: custom-test-value }]",
    ].join("\n"),
  },
});
const agent = { image: "registry.example/aiem-agent:1", config: '{"listen":"tcp"}' };
/** The sandbox's Service, which owns its other objects. */
const serviceOwner = { kind: "Service", name: `engine-${uid}`, uid: "s-1" };

describe("a sandbox's objects", () => {
  it("run the sandbox image in one container with the agent copied in by an init container", () => {
    const pod = sandboxPod(sandboxPodSpecOf(engine), "ns", agent, serviceOwner);
    expect(pod.metadata).toMatchObject({
      name: `engine-${uid}`,
      namespace: "ns",
      labels: {
        "app.kubernetes.io/name": "sandbox-engine",
        "app.kubernetes.io/instance": uid,
        "app.kubernetes.io/managed-by": "engine-operator",
        "app.kubernetes.io/created-by": "engine-operator",
        "cloud.h2o.ai/creator": "5e7f",
        "cloud.h2o.ai/owner": "5e7f",
        team: "ml",
      },
      annotations: {
        "cloud.h2o.ai/resource": "//engine-manager/workspaces/8cf6b17d/sandboxEngines/s1",
        "cloud.h2o.ai/workspace-id": "8cf6b17d",
        "cloud.h2o.ai/creator": "users/5e7f",
        "cloud.h2o.ai/creator-display-name": "Alice",
      },
      ownerReferences: [{ kind: "Service", name: `engine-${uid}`, uid: "s-1", blockOwnerDeletion: true }],
    });
    const spec = pod.spec!;
    expect(spec.restartPolicy).toBe("Never");
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(spec.nodeSelector).toEqual({ pool: "sandboxes" });
    expect(spec.containers).toHaveLength(1);
    const [container] = spec.containers;
    expect(container).toMatchObject({
      name: "sandbox",
      image: "registry.example/sandbox:1",
      imagePullPolicy: "IfNotPresent",
      command: ["/.aiem/agent"],
      ports: [{ name: "grpc", containerPort: 50051, protocol: "TCP" }],
      resources: {
        requests: { cpu: "100m", memory: "10485760" },
        limits: { cpu: "200m", memory: "20971520", "ephemeral-storage": "10485760", "amd.com/gpu": "1" },
      },
    });
    expect(container?.env).toEqual([
      { name: "AIEM_AGENT_CONFIG_FILE", value: "/.aiem-config/agent.json" },
      { name: "POD_TEMPLATE_TEST_VAR", value: "custom-test-value" },
    ]);
    expect(spec.initContainers?.[0]).toMatchObject({
      image: agent.image,
      command: ["/aiem/agent", "install", "/.aiem/agent"],
      volumeMounts: [{ name: "aiem-agent", mountPath: "/.aiem" }],
    });
    expect(container?.volumeMounts).toEqual([
      { name: "aiem-agent", mountPath: "/.aiem", readOnly: true },
      { name: "aiem-agent-config", mountPath: "/.aiem-config", readOnly: true },
    ]);
    expect(spec.volumes).toContainEqual({
      name: "aiem-agent-config",
      secret: { secretName: `engine-${uid}`, defaultMode: 0o440 },
    });
    expect(JSON.stringify(pod)).not.toContain(agent.config);
  });

  it("keep the agent's configuration in a Secret of the sandbox, owned by its Service", () => {
    const secret = agentConfigSecret(uid, "ns", '{"token":"t"}', serviceOwner);
    expect(secret.metadata).toMatchObject({
      name: `engine-${uid}`,
      namespace: "ns",
      labels: { "app.kubernetes.io/instance": uid, "app.kubernetes.io/name": "sandbox-engine" },
      ownerReferences: [{ kind: "Service", name: `engine-${uid}`, uid: "s-1", blockOwnerDeletion: true }],
    });
    expect(secret.immutable).toBe(true);
    expect(secret.data).toEqual({ "agent.json": Buffer.from('{"token":"t"}').toString("base64") });
  });

  it("give the sandbox container this installation's H2O AI Cloud variables and the template's", () => {
    const cloud = h2oCloudEnvironment("https://aiem.example.com/", true);
    expect(cloud).toEqual({
      H2O_CLOUD_ENVIRONMENT: "https://aiem.example.com",
      H2O_CLOUD_DISCOVERY: "https://aiem.example.com/.ai.h2o.cloud.discovery",
      H2O_CLOUD_TOKEN_ENDPOINT_URL: "https://aiem.example.com/oidc/token",
    });
    // An outside issuer's token endpoint is in its own discovery; an unknown URL gives nothing.
    expect(h2oCloudEnvironment("https://aiem.example.com", false)).not.toHaveProperty("H2O_CLOUD_TOKEN_ENDPOINT_URL");
    expect(h2oCloudEnvironment(undefined, true)).toEqual({});

    const withVariables = clone(SandboxEngineSchema, engine);
    // The template may replace a cloud variable, never the agent's configuration.
    withVariables.sandboxEngineTemplateInfo!.environmentalVariables = {
      FROM_TEMPLATE: "t",
      H2O_CLOUD_ENVIRONMENT: "https://other",
      AIEM_AGENT_CONFIG: "{}",
    };
    const container = sandboxPod(sandboxPodSpecOf(withVariables, cloud), "ns", agent).spec?.containers[0];
    expect(container?.env).toEqual([
      { name: "AIEM_AGENT_CONFIG_FILE", value: "/.aiem-config/agent.json" },
      { name: "H2O_CLOUD_ENVIRONMENT", value: "https://other" },
      { name: "H2O_CLOUD_DISCOVERY", value: "https://aiem.example.com/.ai.h2o.cloud.discovery" },
      { name: "H2O_CLOUD_TOKEN_ENDPOINT_URL", value: "https://aiem.example.com/oidc/token" },
      { name: "FROM_TEMPLATE", value: "t" },
      { name: "POD_TEMPLATE_TEST_VAR", value: "custom-test-value" },
    ]);
  });

  it("reach the agent through a Service on port 80 and each port through one of its own", () => {
    expect(sandboxService(uid, "ns").spec).toEqual({
      type: "ClusterIP",
      selector: { "app.kubernetes.io/instance": uid },
      ports: [{ name: "grpc", port: 80, targetPort: 50051, protocol: "TCP" }],
    });
    const service = portService(uid, 8080, "ns");
    expect(service.metadata?.name).toBe(`engine-${uid}-port-8080`);
    expect(service.metadata?.labels?.["engine.h2o.ai/port-id"]).toBe("8080");
    expect(service.spec?.ports).toEqual([{ name: "http", port: 8080, targetPort: 8080, protocol: "TCP" }]);
  });

  it("route a public port's URL to its Service, stripping the URL's path", () => {
    const route = portRoute(uid, 9090, "ns", {
      publicUrl: `https://example.com/sandboxes/${uid}/public/9090/`,
      gateway: { name: "public", namespace: "gateways" },
    });
    expect(route.metadata.name).toBe(`engine-${uid}-port-9090`);
    expect(route.spec).toEqual({
      parentRefs: [{ name: "public", namespace: "gateways" }],
      hostnames: ["example.com"],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: `/sandboxes/${uid}/public/9090` } }],
          filters: [
            { type: "URLRewrite", urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "" } } },
          ],
          backendRefs: [{ name: `engine-${uid}-port-9090`, port: 9090 }],
        },
      ],
    });
  });

  it("make label values of principals' names", () => {
    expect(labelValue("users/5e7f-aa")).toBe("5e7f-aa");
    expect(labelValue("users/someone@example.com")).toBe("someone_example.com");
    expect(labelValue(`users/${"x".repeat(80)}`)).toHaveLength(63);
  });
});

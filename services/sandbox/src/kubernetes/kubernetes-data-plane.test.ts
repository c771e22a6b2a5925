// The sandbox service's data plane on Kubernetes against a real control plane: kwok makes the
// pods Running and gives each an address on loopback, and the fixture runs the real agent there
// with the pod's configuration, as the pod's container would. Through the REST API, a process
// runs in the sandbox and its output is read, a file is written and read back; the agent refuses
// whoever does not carry the sandbox's token.
import { Code } from "@connectrpc/connect";
import { kubernetesSkipReason } from "@aiem/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxClusterFixture, startSandboxCluster } from "../testing/kubernetes-cluster.js";
import { connectAgent } from "../runtime/index.js";
import { type PodAgents, startPodAgents } from "../testing/pod-agents.js";
import { ok, type SandboxHarness, startSandboxHarness, unb64 } from "../testing/index.js";

const unavailable = kubernetesSkipReason("kubernetes-data-plane.test.ts");
const namespace = "sandboxes";

describe.skipIf(unavailable !== undefined)("the sandbox data plane on Kubernetes", () => {
  let k8s: SandboxClusterFixture;
  let agents: PodAgents;
  let h: SandboxHarness;

  beforeAll(async () => {
    k8s = await startSandboxCluster(namespace, { routes: false });
    agents = await startPodAgents(k8s, namespace);
    h = await startSandboxHarness({
      settings: {
        runtime: "kubernetes",
        kubernetes: {
          namespace,
          agentImage: "example.invalid/aiem-agent:1",
          kubeconfigPath: k8s.cluster.kubeconfigPath,
        },
      },
    });
  }, 240_000);
  afterAll(async () => {
    await h?.stop();
    await agents?.stop();
    await k8s?.stop();
  });

  it("runs a process and reads and writes files through the agent in the sandbox's pod", async () => {
    const sandbox = await h.createSandbox("k8s-data");
    const agent = await agents.ready(sandbox.uid);
    const pod = await k8s.core.readNamespacedPod({ namespace, name: `engine-${sandbox.uid}` });
    expect(agent.host).toBe(pod.status?.podIP);

    const { process, output } = await h.run(sandbox.name, "sh", ["-c", "echo ran-$((6 * 7)); pwd"]);
    expect(process.exitCode).toBe(0);
    expect(output).toBe(`ran-42\n${agent.root}/workspace\n`);

    const content = Buffer.from("written through the pod's agent\n");
    ok(
      await h.rest("POST", `/v1/${sandbox.name}/filesystem:writeFile`, {
        body: { path: "/workspace/notes/a.txt", content: content.toString("base64"), createParentDirectories: true },
      }),
    );
    const read = ok(await h.rest("GET", `/v1/${sandbox.name}/filesystem:readFile?path=/workspace/notes/a.txt`));
    expect(unb64(read.content)).toEqual(content);
    ok(await h.rest("DELETE", `/v1/${sandbox.name}`));
  }, 120_000);

  it("has the agent refuse a call without the sandbox's token or with another", async () => {
    const sandbox = await h.createSandbox("k8s-token");
    const agent = await agents.ready(sandbox.uid);
    const health = async (token: string | undefined) => {
      const connection = connectAgent(agent, { token });
      try {
        return await connection.client.health({});
      } finally {
        connection.close();
      }
    };
    await expect(health(undefined)).rejects.toMatchObject({ code: Code.Unauthenticated });
    await expect(health("not-the-token")).rejects.toMatchObject({ code: Code.Unauthenticated });
    // The one the pod was given is taken.
    const pod = await k8s.core.readNamespacedPod({ namespace, name: `engine-${sandbox.uid}` });
    const config = pod.spec?.containers[0]?.env?.find((e) => e.name === "AIEM_AGENT_CONFIG")?.value ?? "{}";
    expect((await health(JSON.parse(config).token)).version).not.toBe("");
    ok(await h.rest("DELETE", `/v1/${sandbox.name}`));
  }, 120_000);
});

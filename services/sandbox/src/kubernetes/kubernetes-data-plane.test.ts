// The sandbox service's data plane on Kubernetes against a real control plane: kwok makes the
// pods Running and gives each an address on loopback, and the fixture runs the real agent there
// with the pod's configuration, as the pod's container would. Through the REST API, a process
// runs in the sandbox and its output is read, a file is written and read back; the agent refuses
// whoever does not carry the sandbox's token; a port's URLs reach the program at the pod's address.
import { createServer } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { waitFor } from "@aiem/kit/events/testing";
import { Code } from "@connectrpc/connect";
import { kubernetesSkipReason } from "@aiem/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxClusterFixture, startSandboxCluster } from "../testing/kubernetes-cluster.js";
import { connectAgent } from "../runtime/index.js";
import { type PodAgents, startPodAgents } from "../testing/pod-agents.js";
import { ok, type SandboxHarness, startSandboxHarness, unb64, USERS } from "../testing/index.js";

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
    // The one the pod was given, in its Secret, is taken.
    const secret = await k8s.core.readNamespacedSecret({ namespace, name: `engine-${sandbox.uid}` });
    const config = JSON.parse(Buffer.from(secret.data?.["agent.json"] ?? "", "base64").toString());
    expect((await health(config.token)).version).not.toBe("");
    ok(await h.rest("DELETE", `/v1/${sandbox.name}`));
  }, 120_000);

  it("proxies a port's URLs, HTTP and upgrades, to the program listening at the pod's address", async () => {
    const sandbox = await h.createSandbox("k8s-port");
    const agent = await agents.ready(sandbox.uid);
    // The program in the pod: it answers with what it was asked, and echoes an upgraded connection.
    const program = createServer((req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ url: req.url, host: req.socket.localAddress }));
    });
    program.on("upgrade", (_req, socket: Duplex) => {
      socket.write("HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\n\r\n");
      socket.on("data", (data) => socket.write(data));
    });
    const sockets = new Set<Duplex>();
    program.on("connection", (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => program.listen(9090, agent.host, resolve));
    try {
      const created = ok(
        await h.rest("POST", `/v1/${sandbox.name}/ports?portId=9090`, { body: { displayName: "web", public: true } }),
      ).port;
      await waitFor(
        async () => ok(await h.rest("GET", `/v1/${created.name}`)).port.state === "STATE_READY",
        30_000,
        "the port to be ready",
      );
      const port = ok(await h.rest("GET", `/v1/${created.name}`)).port;

      // The private URL takes the creator's token; the public one anybody.
      const internal = await fetch(`${port.internalUrl}page?x=1`, {
        headers: { authorization: `Bearer ${await h.token(USERS.creator)}` },
      });
      expect(internal.status).toBe(200);
      expect(await internal.json()).toEqual({ url: "/page?x=1", host: agent.host });
      const refused = await fetch(`${port.internalUrl}page`);
      expect(refused.status).toBe(401);
      await refused.body?.cancel();
      const open = await fetch(`${port.publicUrl}other`);
      expect(await open.json()).toEqual({ url: "/other", host: agent.host });
      expect(await upgradeEcho(port.publicUrl, "ping through the pod")).toBe("ping through the pod");

      // Nothing listening on a port: the proxy says so.
      const closed = ok(await h.rest("POST", `/v1/${sandbox.name}/ports?portId=9091`, { body: { public: true } })).port;
      await waitFor(
        async () => ok(await h.rest("GET", `/v1/${closed.name}`)).port.state === "STATE_READY",
        30_000,
        "the second port to be ready",
      );
      const nothing = await fetch(ok(await h.rest("GET", `/v1/${closed.name}`)).port.publicUrl);
      expect(nothing.status).toBe(502);
      expect(((await nothing.json()) as { message: string }).message).toMatch(
        /nothing accepts connections on port 9091/,
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => program.close(resolve));
    }
    ok(await h.rest("DELETE", `/v1/${sandbox.name}`));
  }, 120_000);
});

/** Opens an upgrade at `url`, sends `text` once it is switched and resolves with what comes back. */
function upgradeEcho(url: string, text: string): Promise<string> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(
        `GET ${target.pathname} HTTP/1.1\r\nhost: ${target.host}\r\nupgrade: websocket\r\nconnection: Upgrade\r\n` +
          "sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
      );
    });
    let seen = "";
    let switched = false;
    socket.on("data", (data) => {
      seen += data.toString();
      if (!switched && seen.includes("\r\n\r\n")) {
        if (!seen.startsWith("HTTP/1.1 101")) return reject(new Error(`not switched: ${seen}`));
        switched = true;
        seen = seen.slice(seen.indexOf("\r\n\r\n") + 4);
        socket.write(text);
      }
      if (switched && seen.length >= text.length) {
        socket.destroy();
        resolve(seen);
      }
    });
    socket.on("error", reject);
  });
}

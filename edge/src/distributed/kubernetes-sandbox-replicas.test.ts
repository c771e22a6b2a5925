// Two sandbox service replicas on the Kubernetes runtime, against one PostgreSQL, NATS and a real
// control plane with kwok nodes, with the real agent standing in for each pod's container on the
// pod's (loopback) IP: either replica reaches a sandbox's agent through the cluster, none is
// pinned, and with one SIGKILLed the other carries on with the same agent, its processes and
// files. Needs the real stack and the Kubernetes binaries; skipped, saying why, without them.
import { describe, expect, it } from "vitest";
import { sandboxReplicasSkipReason, useSandboxReplicas } from "./kubernetes-sandbox-replicas-fixture.js";
import { type RestClient, SANDBOX_IMAGE, SANDBOX_TEMPLATE } from "./rest-client.js";

const unavailable = sandboxReplicasSkipReason("kubernetes-sandbox-replicas.test.ts");

describe.skipIf(unavailable !== undefined)("sandbox replicas on the Kubernetes runtime", () => {
  const fixture = useSandboxReplicas("sandboxes");
  const { via, replica, sh } = fixture;
  const echoIn = (api: RestClient, sandbox: string, text: string) => sh(api, sandbox, `printf %s '${text}'`);

  it("serves a sandbox from the other replica at once: its first call adopts the pod, with the first's processes", async () => {
    const first = via("sandbox-0");
    const created = await first.ok("POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=adopt", {
      sandboxEngineImage: SANDBOX_IMAGE,
      sandboxEngineTemplate: SANDBOX_TEMPLATE,
    });
    const name = created.sandboxEngine.name as string;
    await first.waitFor(name, "state", ["STATE_RUNNING"], 90_000);
    const long = await first.ok("POST", `/v1/${name}/processes?autoRun=true`, {
      command: "sh",
      args: ["-c", "while [ ! -e go ]; do sleep 0.1; done; echo got-$(cat go)"],
    });

    // No waiting for the second replica's reconcile: its first call takes the sandbox over.
    const second = via("sandbox-1");
    expect(await echoIn(second, name, "at-once")).toBe("at-once");
    await second.ok("POST", `/v1/${name}/filesystem:writeFile`, {
      path: "/workspace/go",
      content: Buffer.from("y").toString("base64"),
    });
    const read = await second.ok("GET", `/v1/${name}/filesystem:readFile?path=/workspace/go`);
    expect(Buffer.from(read.content as string, "base64").toString()).toBe("y");
    // The process the first replica started is followed by the second: its end and output.
    const ended = await second.ok("POST", `/v1/${long.process.name}:wait`, {});
    expect(ended.process.state).toBe("STATE_SUCCEEDED");
    const out = await second.ok("GET", `/v1/${long.process.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    expect(Buffer.from(out.data as string, "base64").toString()).toBe("got-y\n");

    await second.ok("DELETE", `/v1/${name}`);
    await expect.poll(async () => (await second.call("GET", `/v1/${name}`)).status, { timeout: 60_000 }).toBe(404);
  }, 300_000);

  it("reaches a sandbox's agent from either replica, and from the one left when the other is SIGKILLed", async () => {
    const edge = via("edge");
    const created = await edge.ok("POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=pods", {
      sandboxEngineImage: SANDBOX_IMAGE,
      sandboxEngineTemplate: SANDBOX_TEMPLATE,
    });
    const name = created.sandboxEngine.name as string;
    const { uid } = await edge.waitFor(name, "state", ["STATE_RUNNING"], 90_000);
    const agent = await fixture.agents.ready(uid);

    // Both replicas serve it (the one that did not start it takes the pod over on its first call).
    for (const r of ["sandbox-0", "sandbox-1"])
      await expect
        .poll(async () => (await via(r).call("GET", `/v1/${name}/filesystem:statFile?path=/workspace`)).status, {
          timeout: 30_000,
        })
        .toBe(200);
    for (const r of ["sandbox-0", "sandbox-1"]) expect(await echoIn(via(r), name, `via-${r}`)).toBe(`via-${r}`);
    // A file written through one replica is read through the other: one agent, in the pod.
    const content = Buffer.from("one pod, two replicas");
    await via("sandbox-0").ok("POST", `/v1/${name}/filesystem:writeFile`, {
      path: "/workspace/shared.txt",
      content: content.toString("base64"),
    });
    const read = await via("sandbox-1").ok("GET", `/v1/${name}/filesystem:readFile?path=/workspace/shared.txt`);
    expect(Buffer.from(read.content as string, "base64")).toEqual(content);
    // A process started through one replica is waited for and read through the other.
    const long = await via("sandbox-0").ok("POST", `/v1/${name}/processes?autoRun=true`, {
      command: "sh",
      // Waits for a file the test writes later (its working directory is /workspace).
      args: ["-c", "while [ ! -e go ]; do sleep 0.1; done; echo got-$(cat go)"],
    });

    await fixture.cluster.stop(replica("sandbox-0"), "SIGKILL");

    const left = via("sandbox-1");
    expect((await left.ok("GET", `/v1/${name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
    await left.ok("POST", `/v1/${name}/filesystem:writeFile`, {
      path: "/workspace/go",
      content: Buffer.from("x").toString("base64"),
    });
    await left.ok("POST", `/v1/${long.process.name}:wait`, {});
    const out = await left.ok("GET", `/v1/${long.process.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    expect(Buffer.from(out.data as string, "base64").toString()).toBe("got-x\n");
    expect(await echoIn(left, name, "after")).toBe("after");
    // The same agent all along: the pod was left alone.
    expect(await fixture.agents.ready(uid)).toBe(agent);

    await left.ok("DELETE", `/v1/${name}`);
    await expect.poll(async () => (await left.call("GET", `/v1/${name}`)).status, { timeout: 60_000 }).toBe(404);
  }, 300_000);
});

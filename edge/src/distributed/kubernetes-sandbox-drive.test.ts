// The workspaces' drive with two sandbox service replicas on the Kubernetes runtime, as the split
// manifests run them (docs/adr/0276): one drive directory both processes share (the ReadWriteMany
// claim's stand-in), one PostgreSQL and NATS, a real control plane with kwok nodes and the real
// agent on each pod's (loopback) IP. A file written in the sandbox is uploaded through one replica
// and downloaded into the sandbox through the other; uploads through both at once leave one whole
// file; with the first replica SIGKILLed the other serves the sandbox's processes, files and
// drive. Needs the real stack and the Kubernetes binaries; skipped, saying why, without them.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sandboxReplicasSkipReason, useSandboxReplicas } from "./kubernetes-sandbox-replicas-fixture.js";
import { type RestClient, SANDBOX_IMAGE, SANDBOX_TEMPLATE } from "./rest-client.js";

const unavailable = sandboxReplicasSkipReason("kubernetes-sandbox-drive.test.ts");
const BIG = 4 << 20;

describe.skipIf(unavailable !== undefined)("the drive of sandbox replicas on the Kubernetes runtime", () => {
  const fixture = useSandboxReplicas("sandboxes");
  const { via, replica, sh: shIn } = fixture;
  const driveFile = (...segments: string[]) => join(fixture.cluster.root, "drive", "team-a", ...segments);

  const upload = (api: RestClient, sandbox: string, localPath: string, remotePath: string) =>
    api.ok("POST", `/v1/${sandbox}/h2oDrive:uploadFile`, { localPath, remotePath });
  const download = (api: RestClient, sandbox: string, remotePath: string, localPath: string) =>
    api.ok("POST", `/v1/${sandbox}/h2oDrive:downloadFile`, { remotePath, localPath, createParentDirectories: true });

  it("uploads through one replica, downloads through the other, and keeps serving with one SIGKILLed", async () => {
    const [a, b] = [via("sandbox-0"), via("sandbox-1")];
    // Both replicas are up when A creates the sandbox, and B is asked about it at once, while A
    // still starts it: B's first call after RUNNING takes the pod over and is served, no retry.
    const created = await a.ok("POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=drive", {
      sandboxEngineImage: SANDBOX_IMAGE,
      sandboxEngineTemplate: SANDBOX_TEMPLATE,
    });
    const name = created.sandboxEngine.name as string;
    const { uid } = await b.waitFor(name, "state", ["STATE_RUNNING"], 90_000);
    const agent = await fixture.agents.ready(uid);
    await b.ok("GET", `/v1/${name}/filesystem:statFile?path=/workspace`);

    // Written in the sandbox by its own process, uploaded through A, downloaded through B.
    await shIn(a, name, "mkdir -p out && printf 'made in the pod\\n' > out/report.txt");
    expect((await upload(a, name, "/workspace/out/report.txt", "reports/report.txt")).bytesUploaded).toBe("16");
    expect(readFileSync(driveFile("reports", "report.txt"), "utf8")).toBe("made in the pod\n");
    await download(b, name, "reports/report.txt", "/workspace/in/report.txt");
    expect(await shIn(b, name, "cat in/report.txt")).toBe("made in the pod\n");

    // Two replicas writing the same drive file at once, and a third call reading it meanwhile:
    // every copy read is one of the two files, whole.
    await shIn(
      a,
      name,
      `head -c ${BIG} /dev/zero | tr '\\0' a > big-a && head -c ${BIG} /dev/zero | tr '\\0' b > big-b`,
    );
    await upload(a, name, "/workspace/big-a", "big.bin");
    for (let round = 0; round < 3; round++) {
      await Promise.all([
        upload(a, name, "/workspace/big-a", "big.bin"),
        upload(b, name, "/workspace/big-b", "big.bin"),
        download(b, name, "big.bin", `/workspace/got-${round}`),
      ]);
    }
    const whole = await shIn(
      b,
      name,
      "for f in got-0 got-1 got-2; do if cmp -s $f big-a || cmp -s $f big-b; then echo whole; else echo torn; fi; done",
    );
    expect(whole).toBe("whole\nwhole\nwhole\n");
    const stored = readFileSync(driveFile("big.bin"));
    expect(stored.length).toBe(BIG);
    expect([stored.every((c) => c === 0x61), stored.every((c) => c === 0x62)]).toContain(true);
    // No temporary file is left beside it.
    expect(readdirSync(driveFile()).sort()).toEqual(["big.bin", "reports"]);

    // A process started through A, which B waits for once A is gone.
    const long = await a.ok("POST", `/v1/${name}/processes?autoRun=true`, {
      command: "sh",
      args: ["-c", "while [ ! -e go ]; do sleep 0.1; done; echo got-$(cat go)"],
    });

    await fixture.cluster.stop(replica("sandbox-0"), "SIGKILL");

    expect((await b.ok("GET", `/v1/${name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
    // What A put in the drive is there for B, and B writes to it.
    await download(b, name, "reports/report.txt", "/workspace/again/report.txt");
    await shIn(b, name, "printf x > go && printf 'after the kill\\n' > out/later.txt");
    await upload(b, name, "/workspace/out/later.txt", "reports/later.txt");
    await download(b, name, "reports/later.txt", "/workspace/in/later.txt");
    expect(await shIn(b, name, "cat again/report.txt in/later.txt")).toBe("made in the pod\nafter the kill\n");
    await b.ok("POST", `/v1/${long.process.name}:wait`, {});
    const out = await b.ok("GET", `/v1/${long.process.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`);
    expect(Buffer.from(out.data as string, "base64").toString()).toBe("got-x\n");
    // The same pod and agent all along.
    expect(await fixture.agents.ready(uid)).toBe(agent);

    await b.ok("DELETE", `/v1/${name}`);
    await expect.poll(async () => (await b.call("GET", `/v1/${name}`)).status, { timeout: 60_000 }).toBe(404);
  }, 300_000);
});

// The product run as root, as a newcomer runs it from a checkout under /root: its data directory
// lies under a directory of mode 0700 that the sandboxes' own uids cannot pass. A sandbox still
// reaches RUNNING and runs a program (docs/adr/0104), and the 0700 directory stays as it was.
// Where a sandbox cannot start, it says why through the API (services/sandbox/src/lifecycle.suite.ts).
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "@aiem/kit/events/testing";
import { createModuleFactories } from "./host/modules.js";
import { startTestHost, type TestHost } from "./testing/test-host.js";

// Sandboxes are confined by bubblewrap as the host's root; elsewhere there is nothing to show.
const confined = process.getuid?.() === 0 && fs.existsSync("/usr/bin/bwrap");
const POLICY = "admins: [users/root]\nworkspaces:\n  team-a:\n    members: [users/alice]\n";

describe.skipIf(!confined)("the product as root with its data directory under a 0700 directory", () => {
  let t: TestHost;
  /** The 0700 directory above the data directory, like /root above a checkout. */
  let home: string;

  beforeAll(async () => {
    t = await startTestHost({
      modules: createModuleFactories(),
      policy: POLICY,
      dataSubdir: "checkout/data",
      env: { AIEM_SANDBOX_WARM_POOL: "0" },
    });
    home = path.dirname(path.dirname(t.dataDir));
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
  }, 120_000);

  it("runs a sandbox there and leaves the 0700 directory as it was", { timeout: 120_000 }, async () => {
    fs.chmodSync(home, 0o700);
    const before = fs.statSync(home);
    expect(before.mode & 0o777).toBe(0o700);
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await t.call(method, p, { user: "alice", ...(body === undefined ? {} : { body }) });
      const json = (await res.json()) as Record<string, unknown>;
      expect(res.status, JSON.stringify(json)).toBe(200);
      return json;
    };
    type Sandbox = { name: string; state: string; failureReason?: string };
    const created = (
      await call("POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=home", {
        sandboxEngineImage: "workspaces/global/sandboxEngineImages/default",
        sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/default",
      })
    ).sandboxEngine as Sandbox;
    let seen: Sandbox = created;
    await waitFor(
      async () => {
        seen = (await call("GET", `/v1/${created.name}`)).sandboxEngine as Sandbox;
        return seen.state === "STATE_RUNNING" || seen.state === "STATE_FAILED";
      },
      90_000,
      "the sandbox to run or fail",
    );
    expect(seen, seen.failureReason).toMatchObject({ state: "STATE_RUNNING" });

    const started = (
      await call("POST", `/v1/${created.name}/processes?autoRun=true`, { command: "sh", args: ["-c", "echo inside"] })
    ).process as { name: string };
    const ended = (await call("POST", `/v1/${started.name}:wait`, {})).process as { state: string; exitCode: number };
    expect(ended).toMatchObject({ state: "STATE_SUCCEEDED", exitCode: 0 });
    const output = (await call("GET", `/v1/${started.name}:readOutput?outputStream=OUTPUT_STREAM_COMBINED`)) as {
      data: string;
    };
    expect(Buffer.from(output.data, "base64").toString()).toBe("inside\n");

    const after = fs.statSync(home);
    expect([after.mode & 0o777, after.uid, after.gid]).toEqual([0o700, before.uid, before.gid]);
  });
});

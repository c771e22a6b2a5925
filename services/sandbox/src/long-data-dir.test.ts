// A data directory whose path is longer than a unix socket address may be (108 bytes): every
// per-sandbox socket lies beneath it, so the runtime binds and connects them through a descriptor
// of their directory. Through the REST edge, on both stacks.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandboxHarness, type SandboxHarness } from "./testing/index.js";

const LONG = `${"a-long-directory-name-".repeat(4)}/${"and-another-one-".repeat(4)}/data`;

// Confined, the launcher binds each agent's socket; unconfined, the agent binds its own.
describe.each([
  ["confined", false],
  ["unconfined", true],
])("a data directory with a path longer than a socket address, %s", (_, unconfined) => {
  let h: SandboxHarness;
  beforeAll(async () => {
    h = await startSandboxHarness({ dataSubdir: LONG, settings: { unconfined } });
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it("runs a sandbox and a process in it", async () => {
    expect(Buffer.byteLength(`${h.t.dataDir}/sandboxes/x/agent.sock`)).toBeGreaterThan(108);
    const sandbox = await h.createSandbox("long-path");
    expect(sandbox.state).toBe("STATE_RUNNING");
    const { process, output } = await h.run(sandbox.name, "sh", ["-c", "echo hello from $(pwd)"]);
    expect(process.exitCode).toBe(0);
    expect(output).toMatch(/^hello from \//);
  }, 60_000);
});

// A data directory where the sandboxes' own uids cannot pass (a checkout under /root, mode 0700):
// sandbox-launch, as the host's root, puts each sandbox's root and stage where bubblewrap (which
// runs as the sandbox's uid) reaches them, so sandboxes run all the same, and nothing about the
// directories above the data directory changes.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { OutputStream } from "@aiem/proto/enginemanager/sandbox/v1/process_service_pb.js";
import { afterAll, describe, expect, it } from "vitest";
import { findBwrap } from "./bwrap.js";
import { createLocalSandboxRuntime } from "./local-runtime.js";

const home = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-home-"));

describe.skipIf(!findBwrap() || process.getuid?.() !== 0)("a data directory under a 0700 directory", () => {
  afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

  it("runs sandboxes, with and without a storage image, and leaves the 0700 directory as it was", async () => {
    const checkout = path.join(home, "checkout");
    fs.mkdirSync(checkout, { mode: 0o700 });
    fs.chmodSync(home, 0o700);
    const dataDir = path.join(checkout, "data");
    const runtime = createLocalSandboxRuntime({
      dataDir,
      cacheDir: path.join(dataDir, "agent-cache"),
      uidRangeRegistry: path.join(home, "uid-ranges"),
    });
    try {
      await runtime.prepare();
      expect(runtime.startBlocker()).toBeUndefined();
      for (const [id, limits] of [
        ["plain", {}],
        ["imaged", { storageBytes: 32 << 20 }],
      ] as const) {
        const sandbox = await runtime.start(id, { limits });
        expect(sandbox.layers.userNamespace.active).toBe(true);
        await sandbox.client.startProcess({
          processId: "p",
          command: "sh",
          args: ["-c", "echo made > /workspace/f && cat /workspace/f && id -u"],
        });
        await sandbox.client.waitProcess({ processId: "p", waitForOutput: true });
        const out = await sandbox.client.readOutput({ processId: "p", stream: OutputStream.COMBINED });
        expect(Buffer.from(out.data).toString()).toBe("made\n0\n");
      }
      expect([fs.statSync(home).mode & 0o777, fs.statSync(checkout).mode & 0o777]).toEqual([0o700, 0o700]);
    } finally {
      await runtime.close();
    }
  });
});

// The agent image as a registry tool would read it: the index leads to the manifest, the manifest
// to the config and the layer, every blob matching its digest and size; the layer, unpacked by
// the system's tar, holds only the agent, executable and owned by root, and it runs. Built twice,
// it is the same bytes.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { findGo, readSandboxVersion } from "../../services/sandbox/src/runtime/go-agent-build.js";
import { buildAgentImage } from "./agent-image.js";
import { type Descriptor, mediaTypes, sha256, tarOf } from "./oci-image.js";

const scratch = mkdtempSync(join(tmpdir(), "aiem-agent-image-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A blob of the layout, checked against the descriptor that names it. */
function blob(layout: string, descriptor: Descriptor): Buffer {
  const data = readFileSync(join(layout, "blobs", "sha256", descriptor.digest.slice("sha256:".length)));
  expect(data.length, `${descriptor.digest}'s size`).toBe(descriptor.size);
  expect(sha256(data)).toBe(descriptor.digest);
  return data;
}

function tar(args: string[]): string {
  return execFileSync("tar", args, { encoding: "utf8" });
}

describe("tar archives", () => {
  it("are read back by the system's tar with their modes, owner 0 and time 0, in path order", () => {
    const dir = join(scratch, "tar");
    const archive = tarOf([
      { path: "b/c.txt", mode: 0o600, data: Buffer.from("hello") },
      { path: "b/", mode: 0o755 },
      { path: "a", mode: 0o644, data: Buffer.alloc(513, 1) },
    ]);
    expect(archive.length % 512).toBe(0);
    execFileSync("mkdir", ["-p", dir]);
    execFileSync("tar", ["-x", "-C", dir], { input: archive });
    expect(readFileSync(join(dir, "b/c.txt"), "utf8")).toBe("hello");
    expect(statSync(join(dir, "b/c.txt")).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, "a"))).toEqual(Buffer.alloc(513, 1));
    const listing = execFileSync("tar", ["-tv", "--numeric-owner", "--full-time"], {
      input: archive,
      encoding: "utf8",
    });
    expect(listing.trim().split("\n")).toEqual([
      expect.stringMatching(/^-rw-r--r-- 0\/0 +513 1970-01-01 00:00:00 a$/),
      expect.stringMatching(/^drwxr-xr-x 0\/0 +0 1970-01-01 00:00:00 b\/$/),
      expect.stringMatching(/^-rw------- 0\/0 +5 1970-01-01 00:00:00 b\/c.txt$/),
    ]);
  });
});

describe.skipIf(findGo() === undefined)("npm run build:agent-image", () => {
  it("writes a valid OCI layout of the agent alone, which runs, and the same bytes every time", async () => {
    // The service's own version: the agent `npm install` built is reused, not built again.
    const version = readSandboxVersion();
    const first = await buildAgentImage({ out: join(scratch, "first") });
    const layout = first.layout;
    expect(readFileSync(join(layout, "oci-layout"), "utf8")).toBe('{"imageLayoutVersion":"1.0.0"}');

    const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8"));
    expect(index).toMatchObject({ schemaVersion: 2, mediaType: mediaTypes.index });
    expect(index.manifests).toEqual([
      {
        mediaType: mediaTypes.manifest,
        digest: first.digest,
        size: expect.any(Number),
        platform: { architecture: first.architecture, os: "linux" },
        annotations: { "org.opencontainers.image.ref.name": version },
      },
    ]);
    const manifest = JSON.parse(blob(layout, index.manifests[0]).toString("utf8"));
    expect(manifest).toMatchObject({ schemaVersion: 2, mediaType: mediaTypes.manifest });
    expect(manifest.config.mediaType).toBe(mediaTypes.config);
    expect(manifest.layers).toHaveLength(1);
    expect(manifest.layers[0].mediaType).toBe(mediaTypes.layer);
    const config = JSON.parse(blob(layout, manifest.config).toString("utf8"));
    const layer = blob(layout, manifest.layers[0]);
    expect(config).toMatchObject({
      architecture: first.architecture,
      os: "linux",
      config: { Entrypoint: ["/aiem/agent"] },
      rootfs: { type: "layers", diff_ids: [sha256(gunzipSync(layer))] },
    });
    // Nothing but the manifest, its config and its layer.
    expect(readdirSync(join(layout, "blobs", "sha256")).sort()).toEqual(
      [index.manifests[0], manifest.config, manifest.layers[0]].map((d: Descriptor) => d.digest.slice(7)).sort(),
    );

    const layerFile = join(layout, "blobs", "sha256", manifest.layers[0].digest.slice(7));
    expect(tar(["-tzv", "--numeric-owner", "-f", layerFile]).trim().split("\n")).toEqual([
      expect.stringMatching(/^drwxr-xr-x 0\/0 +0 .* aiem\/$/),
      expect.stringMatching(/^-rwxr-xr-x 0\/0 +\d+ .* aiem\/agent$/),
    ]);
    const rootfs = join(scratch, "rootfs");
    execFileSync("mkdir", ["-p", rootfs]);
    tar(["-xzf", layerFile, "-C", rootfs]);
    expect(execFileSync(join(rootfs, "aiem", "agent"), ["--version"], { encoding: "utf8" })).toBe(`${version}\n`);

    // The archive is the layout directory, file for file.
    const unpacked = join(scratch, "archive");
    execFileSync("mkdir", ["-p", unpacked]);
    tar(["-xf", first.archive, "-C", unpacked]);
    for (const file of [
      "oci-layout",
      "index.json",
      ...readdirSync(join(layout, "blobs", "sha256")).map((f) => `blobs/sha256/${f}`),
    ]) {
      // Digests, not the bytes: a deep comparison of megabytes is slow.
      expect(sha256(readFileSync(join(unpacked, file))), file).toBe(sha256(readFileSync(join(layout, file))));
    }

    const second = await buildAgentImage({ out: join(scratch, "second") });
    expect(second.digest).toBe(first.digest);
    expect(sha256(readFileSync(second.archive))).toBe(sha256(readFileSync(first.archive)));
  }, 300_000);
});

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync, spawn } from "node:child_process";
import { Code, ConnectError } from "@connectrpc/connect";
import { FileType } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { type Filesystem, createFilesystem } from "./filesystem.js";

// The filesystem runs here as it does unconfined: on a host directory that stands for the
// sandbox root, with host files all around it, so every escape that works would be visible.
const base = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-fs-test-"));
const outside = path.join(base, "outside");
const root = path.join(base, "root");
let filesystem: Filesystem;

async function code(promise: Promise<unknown> | (() => unknown)): Promise<Code | "ok"> {
  try {
    await (typeof promise === "function" ? promise() : promise);
    return "ok";
  } catch (error) {
    if (error instanceof ConnectError) return error.code;
    throw error;
  }
}

function text(data: Uint8Array): string {
  return Buffer.from(data).toString("utf8");
}

beforeEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
  fs.mkdirSync(path.join(root, "workspace"), { recursive: true });
  fs.mkdirSync(path.join(root, "usr", "bin"), { recursive: true });
  fs.mkdirSync(path.join(root, "etc"), { recursive: true });
  fs.writeFileSync(path.join(root, "etc", "hostname"), "sandbox\n");
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(outside, "secret.txt"), "host secret");
  filesystem = createFilesystem({ root, maxReadBytes: 1 << 20 });
});

afterAll(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

describe("paths", () => {
  it("rejects '..', empty paths and NUL bytes, and reads relative paths from /workspace", async () => {
    expect(await code(() => filesystem.stat("/workspace/../etc"))).toBe(Code.InvalidArgument);
    expect(await code(() => filesystem.stat("../x"))).toBe(Code.InvalidArgument);
    expect(await code(() => filesystem.stat(""))).toBe(Code.InvalidArgument);
    expect(await code(() => filesystem.stat("/a\0b"))).toBe(Code.InvalidArgument);
    await filesystem.writeFile("rel.txt", Buffer.from("x"), false, false);
    expect(fs.readFileSync(path.join(root, "workspace", "rel.txt"), "utf8")).toBe("x");
    expect(filesystem.stat("/workspace/./rel.txt").path).toBe("/workspace/rel.txt");
  });
});

describe("write, read, stat", () => {
  it("writes new files 0644 and directories 0755, whatever the umask", async () => {
    const old = process.umask(0o077);
    try {
      const info = await filesystem.writeFile("/workspace/a/b/c.txt", Buffer.from("hello"), true, false);
      expect(info).toMatchObject({ path: "/workspace/a/b/c.txt", size: 5n, type: FileType.REGULAR, mode: "0644" });
      expect(filesystem.stat("/workspace/a").mode).toBe("0755");
      expect(filesystem.stat("/workspace/a/b").mode).toBe("0755");
      expect(filesystem.makeDirectory("/workspace/d", false, false).mode).toBe("0755");
    } finally {
      process.umask(old);
    }
  });

  it("fails on a missing parent without createParentDirectories", async () => {
    expect(await code(filesystem.writeFile("/workspace/no/such.txt", Buffer.from("x"), false, false))).toBe(
      Code.NotFound,
    );
    expect(await code(() => filesystem.makeDirectory("/workspace/no/dir", false, false))).toBe(Code.NotFound);
  });

  it("refuses to overwrite unless asked, and keeps the mode of an overwritten file", async () => {
    await filesystem.writeFile("/workspace/f", Buffer.from("one"), false, false, 0o600);
    expect(await code(filesystem.writeFile("/workspace/f", Buffer.from("two"), false, false))).toBe(Code.AlreadyExists);
    const info = await filesystem.writeFile("/workspace/f", Buffer.from("three"), false, true);
    expect(info.mode).toBe("0600");
    expect(text((await filesystem.readFile("/workspace/f", 0, 0)).content)).toBe("three");
    expect(await code(filesystem.writeFile("/workspace/f", Buffer.from("x"), false, true, 0o10000))).toBe(
      Code.InvalidArgument,
    );
  });

  it("applies a mode that is given, also to a replaced file and also when it is 0", async () => {
    expect((await filesystem.writeFile("/workspace/m", Buffer.from("one"), false, false, 0o755)).mode).toBe("0755");
    expect((await filesystem.writeFile("/workspace/m", Buffer.from("two"), false, true, 0o640)).mode).toBe("0640");
    expect((await filesystem.writeFile("/workspace/m", Buffer.from("three"), false, true, 0)).mode).toBe("0000");
    expect(filesystem.stat("/workspace/m").mode).toBe("0000");
  });

  it("describes the file read on the first part, following a link to it", async () => {
    await filesystem.writeFile("/workspace/described", Buffer.from("12345"), false, false, 0o600);
    fs.symlinkSync("described", path.join(root, "workspace", "described-link"));
    const first = await filesystem.readFile("/workspace/described-link", 0, 0);
    expect(first.fileInfo).toMatchObject({
      path: "/workspace/described-link",
      size: 5n,
      type: FileType.REGULAR,
      mode: "0600",
    });
    expect((await filesystem.readFile("/workspace/described", 2, 0)).fileInfo).toBeUndefined();
  });

  it("does not write onto a directory and leaves no temporary files behind", async () => {
    fs.mkdirSync(path.join(root, "workspace", "dir"));
    expect(await code(filesystem.writeFile("/workspace/dir", Buffer.from("x"), false, true))).toBe(
      Code.FailedPrecondition,
    );
    await filesystem.writeFile("/workspace/ok", Buffer.from("x"), false, false);
    expect(fs.readdirSync(path.join(root, "workspace")).sort()).toEqual(["dir", "ok"]);
  });

  it("writes a file from a stream of chunks; a failed or oversized stream leaves the old file and no temporary file", async () => {
    async function* chunks(parts: string[], fail?: Error) {
      for (const p of parts) {
        yield Buffer.from(p);
        await new Promise((r) => setImmediate(r));
      }
      if (fail) throw fail;
    }
    const info = await filesystem.writeFile("/workspace/s.txt", chunks(["one ", "two ", "three"]), false, true);
    expect(info.size).toBe(13n);
    expect(fs.readFileSync(path.join(root, "workspace", "s.txt"), "utf8")).toBe("one two three");
    await expect(
      filesystem.writeFile("/workspace/s.txt", chunks(["partial"], new Error("the client went away")), false, true),
    ).rejects.toThrow();
    expect(fs.readFileSync(path.join(root, "workspace", "s.txt"), "utf8")).toBe("one two three");
    const limited = createFilesystem({ root, maxReadBytes: 1 << 20, maxFileBytes: 8 });
    expect(await code(limited.writeFile("/workspace/s.txt", chunks(["12345", "67890"]), false, true))).toBe(
      Code.ResourceExhausted,
    );
    expect(fs.readFileSync(path.join(root, "workspace", "s.txt"), "utf8")).toBe("one two three");
    expect(fs.readdirSync(path.join(root, "workspace"))).toEqual(["s.txt"]);
  });

  it("reads in parts up to eof", async () => {
    await filesystem.writeFile("/workspace/big", Buffer.alloc(10, 7), false, false);
    const first = await filesystem.readFile("/workspace/big", 0, 4);
    expect(first.content.length).toBe(4);
    expect(first.eof).toBe(false);
    const last = await filesystem.readFile("/workspace/big", 8, 4);
    expect(last.content.length).toBe(2);
    expect(last.eof).toBe(true);
    const past = await filesystem.readFile("/workspace/big", 20, 0);
    expect(past.content.length).toBe(0);
    expect(past.eof).toBe(true);
    expect(await code(filesystem.readFile("/workspace/big", -1, 0))).toBe(Code.InvalidArgument);
    expect(await code(filesystem.readFile("/workspace/nothing", 0, 0))).toBe(Code.NotFound);
    expect(await code(filesystem.readFile("/workspace", 0, 0))).toBe(Code.FailedPrecondition);
  });

  it("stats symbolic links as links and lists directories without following them", async () => {
    fs.symlinkSync("target-file", path.join(root, "workspace", "link"));
    await filesystem.writeFile("/workspace/target-file", Buffer.from("t"), false, false);
    expect(filesystem.stat("/workspace/link").type).toBe(FileType.SYMLINK);
    const entries = filesystem.listDirectory("/workspace");
    expect(entries.map((e) => [e.path, e.type]).sort()).toEqual([
      ["/workspace/link", FileType.SYMLINK],
      ["/workspace/target-file", FileType.REGULAR],
    ]);
    expect(await code(() => filesystem.listDirectory("/workspace/target-file"))).toBe(Code.FailedPrecondition);
    expect(await code(() => filesystem.listDirectory("/workspace/none"))).toBe(Code.NotFound);
    // Reading follows the link inside the sandbox.
    expect(text((await filesystem.readFile("/workspace/link", 0, 0)).content)).toBe("t");
  });
});

describe("makeDirectory, remove, move", () => {
  it("makeDirectory: ALREADY_EXISTS unless exist_ok on a directory; FAILED_PRECONDITION under a file", async () => {
    filesystem.makeDirectory("/workspace/d", false, false);
    expect(await code(() => filesystem.makeDirectory("/workspace/d", false, false))).toBe(Code.AlreadyExists);
    expect(filesystem.makeDirectory("/workspace/d", false, true).type).toBe(FileType.DIRECTORY);
    await filesystem.writeFile("/workspace/file", Buffer.from(""), false, false);
    expect(await code(() => filesystem.makeDirectory("/workspace/file", false, true))).toBe(Code.AlreadyExists);
    expect(await code(() => filesystem.makeDirectory("/workspace/file/sub", true, false))).toBe(
      Code.FailedPrecondition,
    );
  });

  it("remove: a non-empty directory needs recursive; links inside are removed, not followed", async () => {
    fs.mkdirSync(path.join(root, "workspace", "tree", "sub"), { recursive: true });
    fs.writeFileSync(path.join(root, "workspace", "tree", "sub", "f"), "x");
    fs.symlinkSync(outside, path.join(root, "workspace", "tree", "out"));
    expect(await code(filesystem.remove("/workspace/tree", false))).toBe(Code.FailedPrecondition);
    await filesystem.remove("/workspace/tree", true);
    expect(fs.existsSync(path.join(root, "workspace", "tree"))).toBe(false);
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("host secret");
    expect(await code(filesystem.remove("/workspace/tree", true))).toBe(Code.NotFound);
    expect(await code(filesystem.remove("/", true))).toBe(Code.InvalidArgument);
    filesystem.makeDirectory("/workspace/empty", false, false);
    await filesystem.remove("/workspace/empty", false);
  });

  it("move: overwrite rules, directories into themselves, parents", async () => {
    await filesystem.writeFile("/workspace/a", Buffer.from("a"), false, false);
    await filesystem.writeFile("/workspace/b", Buffer.from("b"), false, false);
    expect(await code(() => filesystem.move("/workspace/a", "/workspace/b", false, false))).toBe(Code.AlreadyExists);
    filesystem.move("/workspace/a", "/workspace/b", true, false);
    expect(text((await filesystem.readFile("/workspace/b", 0, 0)).content)).toBe("a");
    expect(await code(() => filesystem.move("/workspace/missing", "/workspace/x", false, false))).toBe(Code.NotFound);
    expect(await code(() => filesystem.move("/workspace/b", "/workspace/new/b", false, false))).toBe(Code.NotFound);
    expect(filesystem.move("/workspace/b", "/workspace/new/b", false, true).path).toBe("/workspace/new/b");
    expect(await code(() => filesystem.move("/workspace/new", "/workspace/new/inner", false, false))).toBe(
      Code.InvalidArgument,
    );
    filesystem.makeDirectory("/workspace/full", false, false);
    await filesystem.writeFile("/workspace/full/f", Buffer.from(""), false, false);
    expect(await code(() => filesystem.move("/workspace/new", "/workspace/full", true, false))).toBe(
      Code.FailedPrecondition,
    );
    expect(await code(() => filesystem.move("/workspace/new/b", "/workspace/full", true, false))).toBe(
      Code.FailedPrecondition,
    );
    filesystem.makeDirectory("/workspace/emptydir", false, false);
    expect(filesystem.move("/workspace/new", "/workspace/emptydir", true, false).type).toBe(FileType.DIRECTORY);
  });

  it("system directories are read-only", async () => {
    expect(await code(filesystem.writeFile("/usr/bin/evil", Buffer.from("x"), false, false))).toBe(
      Code.PermissionDenied,
    );
    expect(await code(filesystem.writeFile("/etc/hostname", Buffer.from("x"), false, true))).toBe(
      Code.PermissionDenied,
    );
    expect(await code(() => filesystem.makeDirectory("/lib64/x", true, false))).toBe(Code.PermissionDenied);
    expect(await code(filesystem.remove("/usr", true))).toBe(Code.PermissionDenied);
    expect(await code(() => filesystem.move("/etc/hostname", "/workspace/h", false, false))).toBe(
      Code.PermissionDenied,
    );
    await filesystem.writeFile("/workspace/x", Buffer.from("x"), false, false);
    expect(await code(() => filesystem.move("/workspace/x", "/usr/x", false, false))).toBe(Code.PermissionDenied);
    // A link in the workspace does not make a system directory writable.
    fs.symlinkSync("/usr/bin", path.join(root, "workspace", "bin"));
    expect(await code(filesystem.writeFile("/workspace/bin/evil", Buffer.from("x"), false, false))).toBe(
      Code.PermissionDenied,
    );
    // Reading them is fine.
    expect(text((await filesystem.readFile("/etc/hostname", 0, 0)).content)).toBe("sandbox\n");
  });
});

describe("escapes", () => {
  it("a relative link that climbs above the root is PERMISSION_DENIED", async () => {
    fs.symlinkSync("../../outside", path.join(root, "workspace", "up"));
    expect(await code(filesystem.readFile("/workspace/up/secret.txt", 0, 0))).toBe(Code.PermissionDenied);
    expect(await code(() => filesystem.listDirectory("/workspace/up"))).toBe(Code.PermissionDenied);
    expect(await code(filesystem.writeFile("/workspace/up/new", Buffer.from("x"), false, false))).toBe(
      Code.PermissionDenied,
    );
    expect(fs.existsSync(path.join(outside, "new"))).toBe(false);
    // The link itself can still be looked at and removed.
    expect(filesystem.stat("/workspace/up").type).toBe(FileType.SYMLINK);
    await filesystem.remove("/workspace/up", false);
    expect(fs.existsSync(outside)).toBe(true);
  });

  it("absolute links are read from the sandbox root, never from the host's", async () => {
    fs.symlinkSync(outside, path.join(root, "workspace", "abs"));
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "workspace", "abs-file"));
    expect(await code(filesystem.readFile("/workspace/abs/secret.txt", 0, 0))).toBe(Code.NotFound);
    expect(await code(filesystem.readFile("/workspace/abs-file", 0, 0))).toBe(Code.NotFound);
    // Written through: lands inside the sandbox at the link's path, not on the host.
    await filesystem.writeFile("/workspace/abs-file", Buffer.from("inside"), true, true);
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("host secret");
    expect(fs.readFileSync(path.join(root, outside, "secret.txt"), "utf8")).toBe("inside");
    // A link to /etc/hostname reaches the sandbox's /etc.
    fs.symlinkSync("/etc/hostname", path.join(root, "workspace", "hn"));
    expect(text((await filesystem.readFile("/workspace/hn", 0, 0)).content)).toBe("sandbox\n");
  });

  it("link loops fail instead of hanging", async () => {
    fs.symlinkSync("b", path.join(root, "workspace", "a"));
    fs.symlinkSync("a", path.join(root, "workspace", "b"));
    expect(await code(filesystem.readFile("/workspace/a", 0, 0))).toBe(Code.FailedPrecondition);
  });

  it("special files are neither read nor written", async () => {
    execFileSync("mkfifo", [path.join(root, "workspace", "fifo")]);
    expect(await code(filesystem.readFile("/workspace/fifo", 0, 0))).toBe(Code.FailedPrecondition);
    expect(await code(filesystem.writeFile("/workspace/fifo", Buffer.from("x"), false, true))).toBe(
      Code.FailedPrecondition,
    );
    fs.symlinkSync("/dev/null", path.join(root, "workspace", "null"));
    fs.mkdirSync(path.join(root, "dev"));
    execFileSync("mknod", [path.join(root, "dev", "null"), "c", "1", "3"]);
    expect(await code(filesystem.readFile("/workspace/null", 0, 0))).toBe(Code.FailedPrecondition);
    expect(filesystem.stat("/workspace/fifo").type).toBe(FileType.UNSPECIFIED);
  });

  it("the agent's own directory is hidden", async () => {
    fs.mkdirSync(path.join(root, ".aiem", "run"), { recursive: true });
    fs.writeFileSync(path.join(root, ".aiem", "agent.mjs"), "code");
    expect(filesystem.listDirectory("/").map((e) => e.path)).not.toContain("/.aiem");
    expect(await code(filesystem.readFile("/.aiem/agent.mjs", 0, 0))).toBe(Code.PermissionDenied);
    expect(await code(filesystem.remove("/.aiem", true))).toBe(Code.PermissionDenied);
    fs.symlinkSync("/.aiem/agent.mjs", path.join(root, "workspace", "agent"));
    expect(await code(filesystem.readFile("/workspace/agent", 0, 0))).toBe(Code.PermissionDenied);
  });

  it("a directory swapped for an escaping link while calls run never lets one out", async () => {
    // Another process keeps replacing /workspace/d between a real directory and a link that
    // climbs out to the host, while this one keeps reading, listing and writing through it.
    const ws = path.join(root, "workspace");
    fs.mkdirSync(path.join(ws, "d"));
    fs.writeFileSync(path.join(ws, "d", "secret.txt"), "inside");
    const swapper = spawn(
      "sh",
      [
        "-c",
        "end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do mv -T d spare; ln -s ../../outside d; rm d; mv -T spare d; done",
      ],
      { cwd: ws, stdio: "ignore" },
    );
    const done = new Promise((r) => swapper.once("exit", r));
    const seen = new Map<string, number>();
    const note = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
    const deadline = Date.now() + 1500;
    let i = 0;
    while (Date.now() < deadline) {
      i++;
      try {
        note(text((await filesystem.readFile("/workspace/d/secret.txt", 0, 0)).content));
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
        note(Code[error.code]);
      }
      try {
        for (const e of filesystem.listDirectory("/workspace/d")) if (e.path.endsWith("secret.txt")) note("listed");
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
      }
      try {
        await filesystem.writeFile(`/workspace/d/w${i}`, Buffer.from("x"), false, false);
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
      }
    }
    swapper.kill();
    await done;
    // Both outcomes happened: the race was real.
    expect(seen.get("inside") ?? 0).toBeGreaterThan(0);
    expect(seen.get("PermissionDenied") ?? 0).toBeGreaterThan(0);
    expect(seen.has("host secret")).toBe(false);
    expect(fs.readdirSync(outside)).toEqual(["secret.txt"]);
    expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("host secret");
  });
});

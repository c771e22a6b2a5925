// The filesystem over REST: every call of spec section 7 with the rules of sections 5 and 8
// (absolute paths, overwrite, create_parent_directories, recursive, modes 0755 / 0644), and an
// escape suite: traversal, symbolic links, races and special files never reach outside.
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RestJson } from "@aiem/kit/testing";
import { b64, expectError, ok, sharedHarness, unb64, type SandboxHarness } from "./testing/index.js";

let h: SandboxHarness;
let sb: RestJson;
const fsCall = (call: string) => `/v1/${sb.name}/filesystem:${call}`;
const write = (p: string, content: string | Buffer, extra: Record<string, unknown> = {}) =>
  h.rest("POST", fsCall("writeFile"), { body: { path: p, content: b64(content), ...extra } });
const read = (p: string) => h.rest("GET", `${fsCall("readFile")}?path=${encodeURIComponent(p)}`);
const stat = (p: string) => h.rest("GET", `${fsCall("statFile")}?path=${encodeURIComponent(p)}`);
const list = (p: string) => h.rest("GET", `${fsCall("listDirectory")}?path=${encodeURIComponent(p)}`);
const sh = async (script: string) => {
  const r = await h.run(sb.name, "sh", ["-c", script]);
  expect(r.process.exitCode, r.output).toBe(0);
  return r.output;
};

beforeAll(async () => {
  h = await sharedHarness();
  sb = await h.createSandbox("fs");
});

describe("filesystem calls", () => {
  it("writes new files with mode 0644 and reads them back, bytes exactly", async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const info = ok(await write("/workspace/bytes.bin", bytes)).fileInfo;
    expect(info).toMatchObject({ path: "/workspace/bytes.bin", size: "256", type: "FILE_TYPE_REGULAR", mode: "0644" });
    expect(info.modifyTime).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(unb64(ok(await read("/workspace/bytes.bin")).content).equals(bytes)).toBe(true);
    expect(ok(await write("/workspace/empty", "")).fileInfo.size).toBe("0");
    expect(ok(await read("/workspace/empty")).content).toBe("");
    const big = Buffer.alloc(512 * 1024, 7);
    ok(await write("/workspace/big", big));
    expect(unb64(ok(await read("/workspace/big")).content).equals(big)).toBe(true);
  });

  it("overwrites unless overwrite is false (unset and null mean true); an overwritten file keeps its mode", async () => {
    ok(await write("/workspace/o.txt", "one"));
    expectError(await write("/workspace/o.txt", "two", { overwrite: false }), "ALREADY_EXISTS", "/workspace/o.txt");
    expect(unb64(ok(await read("/workspace/o.txt")).content).toString()).toBe("one");
    await sh("chmod 600 /workspace/o.txt");
    expect(ok(await write("/workspace/o.txt", "two")).fileInfo.mode).toBe("0600");
    // The official client sends "overwrite": null when its caller gives no value.
    expect(ok(await write("/workspace/o.txt", "three", { overwrite: null })).fileInfo.mode).toBe("0600");
    expect(unb64(ok(await read("/workspace/o.txt")).content).toString()).toBe("three");
    ok(await write("/workspace/o.txt", "four", { overwrite: true }));
    expect(unb64(ok(await read("/workspace/o.txt")).content).toString()).toBe("four");
    expectError(await write("/workspace", "x", { overwrite: true }), "FAILED_PRECONDITION", "is a directory");
  });

  it("applies an octal mode when given: to a new file, and to a replaced one", async () => {
    expect(ok(await write("/workspace/run.sh", "#!/bin/sh\necho ran\n", { mode: "0755" })).fileInfo.mode).toBe("0755");
    expect(await sh("/workspace/run.sh")).toBe("ran\n");
    expect(ok(await write("/workspace/run.sh", "x", { mode: "600" })).fileInfo.mode).toBe("0600");
    expect(ok(await stat("/workspace/run.sh")).fileInfo.mode).toBe("0600");
    expect(ok(await write("/workspace/run.sh", "y", { mode: "" })).fileInfo.mode).toBe("0600");
    for (const mode of ["644x", "0888", "10000", "-1", "rwx", "0o644", " 644"]) {
      expectError(await write("/workspace/bad-mode", "x", { mode }), "INVALID_ARGUMENT", "mode");
    }
    expectError(await write("/workspace/bad-mode", "x", { mode: 420 }), "INVALID_ARGUMENT");
    expectError(await stat("/workspace/bad-mode"), "NOT_FOUND");
  });

  it("returns the file's information with its content, following links", async () => {
    ok(await write("/workspace/described.txt", "12345", { mode: "0640" }));
    await sh("ln -sf described.txt /workspace/described-link");
    const r = ok(await read("/workspace/described-link"));
    expect(unb64(r.content).toString()).toBe("12345");
    expect(r.fileInfo).toMatchObject({
      path: "/workspace/described-link",
      size: "5",
      type: "FILE_TYPE_REGULAR",
      mode: "0640",
    });
    expect(r.fileInfo.modifyTime).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("needs create_parent_directories for missing parents, which get mode 0755", async () => {
    const r = await write("/workspace/a/b/c.txt", "x");
    expectError(r, "FAILED_PRECONDITION", "create_parent_directories");
    ok(await write("/workspace/a/b/c.txt", "x", { createParentDirectories: true }));
    expect(ok(await stat("/workspace/a")).fileInfo).toMatchObject({ type: "FILE_TYPE_DIRECTORY", mode: "0755" });
    expect(ok(await stat("/workspace/a/b")).fileInfo.mode).toBe("0755");
  });

  it("creates directories (0755): createDirectory refuses what exists, makeDirectory accepts a directory", async () => {
    const mk = (call: string, p: string, parents = false) =>
      h.rest("POST", fsCall(call), { body: { path: p, createParentDirectories: parents } });
    expect(ok(await mk("createDirectory", "/workspace/d1")).fileInfo).toMatchObject({
      path: "/workspace/d1",
      type: "FILE_TYPE_DIRECTORY",
      mode: "0755",
    });
    expectError(await mk("createDirectory", "/workspace/d1"), "ALREADY_EXISTS", "/workspace/d1");
    expect(ok(await mk("makeDirectory", "/workspace/d1")).fileInfo.type).toBe("FILE_TYPE_DIRECTORY");
    expectError(await mk("createDirectory", "/workspace/x/y"), "FAILED_PRECONDITION", "create_parent_directories");
    expectError(await mk("makeDirectory", "/workspace/x/y"), "FAILED_PRECONDITION", "create_parent_directories");
    ok(await mk("createDirectory", "/workspace/x/y", true));
    ok(await mk("makeDirectory", "/workspace/m/n", true));
    ok(await write("/workspace/file", "f"));
    expectError(await mk("makeDirectory", "/workspace/file"), "ALREADY_EXISTS");
    expectError(await mk("createDirectory", "/workspace/file/sub"), "FAILED_PRECONDITION", "not a directory");
  });

  it("lists a directory by name with types and octal modes, describing links rather than following them", async () => {
    await sh(
      "mkdir -p /workspace/ls/zdir && echo hi > /workspace/ls/b.txt && ln -s b.txt /workspace/ls/a-link && chmod 751 /workspace/ls/zdir",
    );
    const entries = ok(await list("/workspace/ls")).files;
    expect(entries.map((e: RestJson) => [e.path, e.type, e.mode])).toEqual([
      ["/workspace/ls/a-link", "FILE_TYPE_SYMLINK", "0777"],
      ["/workspace/ls/b.txt", "FILE_TYPE_REGULAR", "0644"],
      ["/workspace/ls/zdir", "FILE_TYPE_DIRECTORY", "0751"],
    ]);
    expect(ok(await list("/workspace/ls/zdir")).files).toEqual([]);
    expectError(await list("/workspace/ls/b.txt"), "FAILED_PRECONDITION", "not a directory");
    expectError(await list("/workspace/nothing"), "NOT_FOUND");
    // The agent's own directory is not listed.
    expect(ok(await list("/")).files.map((e: RestJson) => e.path)).not.toContain("/.aiem");
  });

  it("stats files, directories and links (links themselves)", async () => {
    await sh("echo data > /workspace/st && ln -sf /workspace/st /workspace/st-link");
    expect(ok(await stat("/workspace/st")).fileInfo).toMatchObject({ type: "FILE_TYPE_REGULAR", size: "5" });
    expect(ok(await stat("/workspace/st-link")).fileInfo).toMatchObject({
      path: "/workspace/st-link",
      type: "FILE_TYPE_SYMLINK",
    });
    expect(unb64(ok(await read("/workspace/st-link")).content).toString()).toBe("data\n");
    expectError(await stat("/workspace/none"), "NOT_FOUND", "/workspace/none");
    expectError(await read("/workspace/none"), "NOT_FOUND");
    expectError(await read("/workspace"), "FAILED_PRECONDITION");
  });

  it("moves with the overwrite and parent rules", async () => {
    const mv = (from: string, to: string, extra: Record<string, unknown> = {}) =>
      h.rest("POST", fsCall("move"), { body: { sourcePath: from, destinationPath: to, ...extra } });
    ok(await write("/workspace/mv1", "1"));
    ok(await write("/workspace/mv2", "2"));
    expect(ok(await mv("/workspace/mv1", "/workspace/mv3")).fileInfo).toMatchObject({
      path: "/workspace/mv3",
      type: "FILE_TYPE_REGULAR",
    });
    expectError(await mv("/workspace/mv3", "/workspace/mv2"), "ALREADY_EXISTS", "/workspace/mv2");
    ok(await mv("/workspace/mv3", "/workspace/mv2", { overwrite: true }));
    expect(unb64(ok(await read("/workspace/mv2")).content).toString()).toBe("1");
    expectError(
      await mv("/workspace/mv2", "/workspace/new/dir/mv"),
      "FAILED_PRECONDITION",
      "create_parent_directories",
    );
    ok(await mv("/workspace/mv2", "/workspace/new/dir/mv", { createParentDirectories: true }));
    expect(ok(await stat("/workspace/new/dir")).fileInfo.mode).toBe("0755");
    expectError(await mv("/workspace/missing", "/workspace/x1"), "NOT_FOUND", "/workspace/missing");
    expectError(await mv("/workspace/missing/deeper", "/workspace/x1"), "NOT_FOUND");
    await sh("mkdir -p /workspace/full/x /workspace/dsrc && touch /workspace/full/x/f");
    expectError(
      await mv("/workspace/dsrc", "/workspace/full", { overwrite: true }),
      "FAILED_PRECONDITION",
      "not empty",
    );
    expectError(await mv("/workspace/full", "/workspace/full/x/inside"), "INVALID_ARGUMENT", "destination_path");
  });

  it("removes files, links (not their targets) and directories; non-empty ones only when recursive", async () => {
    const rm = (p: string, recursive = false) => h.rest("POST", fsCall("remove"), { body: { path: p, recursive } });
    await sh(
      "mkdir -p /workspace/rm/sub && echo keep > /workspace/target && ln -s /workspace/target /workspace/rm/link && touch /workspace/rm/sub/f",
    );
    ok(await rm("/workspace/rm/link"));
    expect(unb64(ok(await read("/workspace/target")).content).toString()).toBe("keep\n");
    expectError(await rm("/workspace/rm"), "FAILED_PRECONDITION", "recursive");
    ok(await rm("/workspace/rm", true));
    expectError(await stat("/workspace/rm"), "NOT_FOUND");
    ok(await h.rest("POST", fsCall("createDirectory"), { body: { path: "/workspace/emptydir" } }));
    ok(await rm("/workspace/emptydir"));
    expectError(await rm("/workspace/rm"), "NOT_FOUND");
    expectError(await rm("/"), "INVALID_ARGUMENT", "path");
  });

  it("takes absolute paths only, and names the field at fault", async () => {
    expectError(await read("workspace/x"), "INVALID_ARGUMENT", "path");
    expectError(await read(""), "INVALID_ARGUMENT", "path");
    expectError(await write("relative.txt", "x"), "INVALID_ARGUMENT", "path");
    expectError(
      await h.rest("POST", fsCall("move"), { body: { sourcePath: "a", destinationPath: "/workspace/b" } }),
      "INVALID_ARGUMENT",
      "source_path",
    );
    expectError(
      await h.rest("POST", fsCall("move"), { body: { sourcePath: "/workspace/a", destinationPath: "b" } }),
      "INVALID_ARGUMENT",
      "destination_path",
    );
    expectError(await read(`/${"x/".repeat(2100)}`), "INVALID_ARGUMENT", "path");
    // Repeated slashes and dots are fine.
    ok(await write("/workspace//./dots.txt", "d"));
    expect(ok(await stat("/workspace/dots.txt")).fileInfo.path).toBe("/workspace/dots.txt");
  });

  it("keeps the system directories read-only and the agent's directory out of reach", async () => {
    expectError(await write("/etc/evil", "x"), "PERMISSION_DENIED", "/etc/evil");
    expectError(await write("/usr/bin/env", "x", { overwrite: true }), "PERMISSION_DENIED");
    expectError(await h.rest("POST", fsCall("remove"), { body: { path: "/bin/sh" } }), "PERMISSION_DENIED");
    expectError(await h.rest("POST", fsCall("createDirectory"), { body: { path: "/lib/x" } }), "PERMISSION_DENIED");
    expectError(
      await h.rest("POST", fsCall("move"), { body: { sourcePath: "/etc/hostname", destinationPath: "/workspace/h" } }),
      "PERMISSION_DENIED",
    );
    expectError(await stat("/.aiem/agent.mjs"), "PERMISSION_DENIED");
    expectError(await read("/.aiem/agent"), "PERMISSION_DENIED");
    expectError(await write("/dev/null", "x", { overwrite: true }), "PERMISSION_DENIED");
    // Readable system files are the read-only host copies; secrets in them are masked.
    const shadow = await read("/etc/shadow");
    expect(shadow.status === 200 ? unb64(shadow.body.fileInfo?.content ?? shadow.body.content).length : 0).toBe(0);
  });
});

describe("escape suite: nothing outside the sandbox is ever read or written", () => {
  let outside: string;
  let secret: string;
  let root: string;

  beforeAll(async () => {
    // A host directory next to the sandbox's root, and the root itself as the host sees it.
    outside = path.join(h.t.dataDir, "outside");
    fs.mkdirSync(outside, { recursive: true });
    secret = path.join(outside, "secret.txt");
    fs.writeFileSync(secret, "HOST-SECRET");
    const row = await h.sandbox
      .database!.db.selectFrom("sandbox_engines")
      .select("runtime_id")
      .where("uid", "=", sb.uid)
      .executeTakeFirstOrThrow();
    root = path.join(h.t.dataDir, "sandboxes", (row as { runtime_id: string }).runtime_id, "root");
    expect(fs.existsSync(path.join(root, "workspace"))).toBe(true);
  });

  const hostUnchanged = () => {
    expect(fs.readFileSync(secret, "utf8")).toBe("HOST-SECRET");
    expect(fs.readdirSync(outside)).toEqual(["secret.txt"]);
  };

  it("refuses '..' in every path field, however it is encoded", async () => {
    const climb = path.relative(path.join(root, "workspace"), secret);
    for (const p of [`/workspace/${climb}`, "/../etc/passwd", "/workspace/a/../../b"]) {
      expectError(await read(p), "INVALID_ARGUMENT", "path");
      expectError(await write(p, "x", { createParentDirectories: true, overwrite: true }), "INVALID_ARGUMENT", "path");
    }
    const encoded = await h.rest("GET", `${fsCall("readFile")}?path=%2Fworkspace%2F%2E%2E%2F%2E%2E%2Fetc%2Fpasswd`);
    expectError(encoded, "INVALID_ARGUMENT", "path");
    expectError(
      await h.rest("POST", `/v1/${sb.name}/h2oDrive:downloadFile`, {
        body: { workspace: "workspaces/team-a", remotePath: "../../x", localPath: "/workspace/x" },
      }),
      "INVALID_ARGUMENT",
      "remote_path",
    );
    // A name cannot smuggle a path either.
    expectError(
      await h.rest("GET", `/v1/workspaces/team-a/sandboxEngines/fs%2F..%2Fother/filesystem:statFile?path=/`),
      "INVALID_ARGUMENT",
      "name",
    );
    hostUnchanged();
  });

  it("resolves symbolic links inside the sandbox: absolute targets start at its root, climbing stops there", async () => {
    await sh(
      [
        `ln -s ${secret} /workspace/abs`,
        `ln -s ${outside} /workspace/absdir`,
        "ln -s ../../../../../../../../../.. /workspace/up",
        `ln -s ../../../../../../../..${secret} /workspace/up-secret`,
        "ln -s / /workspace/rootlink",
        "ln -s /.aiem /workspace/agent",
        "ln -s loop2 /workspace/loop1 && ln -s loop1 /workspace/loop2",
      ].join(" && "),
    );
    expectError(await read("/workspace/abs"), "NOT_FOUND");
    expectError(await list("/workspace/absdir"), "NOT_FOUND");
    expectError(await read("/workspace/up/etc/hostname"), "PERMISSION_DENIED", "outside the sandbox");
    expectError(await read("/workspace/up-secret"), "PERMISSION_DENIED", "outside the sandbox");
    expectError(await stat("/workspace/agent/agent.mjs"), "PERMISSION_DENIED");
    expectError(await read("/workspace/loop1"), "FAILED_PRECONDITION", "symbolic links");
    // Through /workspace/rootlink, "/" is the sandbox's own root.
    expect(ok(await list("/workspace/rootlink/workspace")).files.map((e: RestJson) => e.path)).toContain(
      "/workspace/rootlink/workspace/abs",
    );
    // Writing through links lands inside the sandbox, never in the host directory.
    ok(await write("/workspace/abs", "through a link", { overwrite: true, createParentDirectories: true }));
    ok(await write("/workspace/absdir/new.txt", "x", { createParentDirectories: true }));
    expectError(await write("/workspace/up/tmp/escaped", "x", { createParentDirectories: true }), "PERMISSION_DENIED");
    ok(
      await h.rest("POST", fsCall("move"), {
        body: {
          sourcePath: "/workspace/bytes.bin",
          destinationPath: "/workspace/absdir/moved.bin",
          createParentDirectories: true,
        },
      }),
    );
    ok(await h.rest("POST", fsCall("remove"), { body: { path: "/workspace/absdir", recursive: true } }));
    hostUnchanged();
    expect(fs.readFileSync(path.join(root, secret), "utf8")).toBe("through a link");
    expect(fs.existsSync(path.join(root, outside, "new.txt"))).toBe(true);
  });

  it("holds while a process swaps directories and links under the calls (races)", async () => {
    // The process flips /workspace/race between a real directory and links to the host directory,
    // to the sandbox root and to a read-only system directory, as fast as it can.
    const script = [
      "mkdir -p /workspace/race-real",
      "i=0",
      "while [ $i -lt 4000 ]; do",
      `  ln -sfn ${outside} /workspace/race; ln -sfn / /workspace/race; ln -sfn /etc /workspace/race;`,
      "  rm -f /workspace/race; ln -sfn race-real /workspace/race; rm -f /workspace/race; mkdir -p /workspace/race; rmdir /workspace/race 2>/dev/null;",
      "  i=$((i+1))",
      "done",
    ].join("\n");
    const racer = ok(
      await h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, { body: { command: "sh", args: ["-c", script] } }),
    ).process;
    const outcomes = new Map<number, number>();
    for (let round = 0; round < 40; round++) {
      const results = await Promise.all([
        write(`/workspace/race/f${round}`, "race", { overwrite: true, createParentDirectories: true }),
        read(`/workspace/race/secret.txt`),
        list("/workspace/race"),
        h.rest("POST", fsCall("makeDirectory"), {
          body: { path: `/workspace/race/d${round}`, createParentDirectories: true },
        }),
        h.rest("POST", fsCall("remove"), { body: { path: `/workspace/race/f${round}` } }),
      ]);
      for (const r of results) {
        outcomes.set(r.status, (outcomes.get(r.status) ?? 0) + 1);
        // Whatever the timing, no call ever sees the host's file.
        expect(r.text).not.toContain(b64("HOST-SECRET"));
      }
    }
    await h.rest("POST", `/v1/${racer.name}:sendSignal`, { body: { signal: 9 } });
    hostUnchanged();
    // Both kinds of outcome happened: the race was real.
    expect(outcomes.get(200)).toBeGreaterThan(0);
  });

  it("treats special files as what they are: no hanging on pipes, no writing devices", async () => {
    await sh("mkfifo /workspace/fifo");
    const t0 = Date.now();
    expectError(await read("/workspace/fifo"), "FAILED_PRECONDITION", "not a regular file");
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(ok(await stat("/workspace/fifo")).fileInfo.type).toBe("FILE_TYPE_UNSPECIFIED");
    expectError(await write("/workspace/fifo", "x", { overwrite: true }), "FAILED_PRECONDITION");
    expectError(await read("/dev/zero"), "FAILED_PRECONDITION", "not a regular file");
    expectError(await read("/dev/urandom"), "FAILED_PRECONDITION");
    expectError(await write("/dev/sda", "x", { overwrite: true }), "PERMISSION_DENIED");
    expectError(await h.rest("POST", fsCall("remove"), { body: { path: "/proc/1/environ" } }), "PERMISSION_DENIED");
    expectError(
      await h.rest("POST", `/v1/${sb.name}/h2oDrive:uploadFile`, {
        body: { workspace: "workspaces/team-a", localPath: "/workspace/fifo", remotePath: "fifo" },
      }),
      "FAILED_PRECONDITION",
    );
    // Device nodes cannot be made in the sandbox at all.
    const mknod = await h.run(sb.name, "mknod", ["/workspace/disk", "b", "8", "0"]);
    expect(mknod.process.state).toBe("STATE_FAILED");
  });
});

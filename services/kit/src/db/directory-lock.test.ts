import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createDatabase } from "./database.js";
import { acquireDirectoryLock, DirectoryLockedError } from "./directory-lock.js";

const lockModule = fileURLToPath(new URL("./directory-lock.ts", import.meta.url));
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Another process that takes the lock on `dir` and holds it until killed. */
async function holdInAnotherProcess(dir: string): Promise<ChildProcess> {
  const code = `import { acquireDirectoryLock } from ${JSON.stringify(lockModule)};
acquireDirectoryLock(${JSON.stringify(dir)}); console.log("held"); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("held") && resolve());
    child.once("exit", (status) => reject(new Error(`lock holder exited with ${status}`)));
  });
  return child;
}

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "aiem-lock-"));
  dirs.push(dir);
  return dir;
}

describe("acquireDirectoryLock", () => {
  it("is taken and given back by one process", () => {
    const dir = join(freshDir(), "pglite");
    const lock = acquireDirectoryLock(dir);
    expect(existsSync(`${dir}.lock`)).toBe(true);
    lock.release();
    expect(existsSync(`${dir}.lock`)).toBe(false);
    acquireDirectoryLock(dir).release();
  });

  it("stops a second process with an error naming the holder", async () => {
    const dir = join(freshDir(), "pglite");
    const holder = await holdInAnotherProcess(dir);
    expect(() => acquireDirectoryLock(dir)).toThrow(DirectoryLockedError);
    expect(() => acquireDirectoryLock(dir)).toThrow(`in use by process ${holder.pid}`);
  });

  it("takes over a lock whose process is gone", async () => {
    const dir = join(freshDir(), "pglite");
    const holder = await holdInAnotherProcess(dir);
    holder.kill("SIGKILL");
    await new Promise((resolve) => holder.once("exit", resolve));
    acquireDirectoryLock(dir).release();
  });

  it("does not take a reused pid for the holder that left the lock", () => {
    const dir = join(freshDir(), "pglite");
    // Our own parent is alive, but started at another time than the record says.
    writeFileSync(`${dir}.lock`, JSON.stringify({ pid: process.ppid, started: "1" }));
    acquireDirectoryLock(dir).release();
  });
});

describe("the embedded database", () => {
  it("refuses a data directory another process has open", async () => {
    const dataDir = freshDir();
    await holdInAnotherProcess(join(dataDir, "pglite"));
    await expect(createDatabase({ dataDir, schema: "s" })).rejects.toThrow(
      /embedded database in .*pglite is in use by process \d+/,
    );
  });
});

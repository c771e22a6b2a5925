// Spare storage images, formatted with the real mkfs.ext4 where the machine has it.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { MIN_STORAGE_BYTES, findTool } from "./limits.js";
import { MKFS_OPTIONS, createStorageImages } from "./storage-images.js";

const mkfs = findTool("mkfs.ext4");
const root = fs.mkdtempSync(path.join(os.tmpdir(), "aiem-images-test-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const run = promisify(execFile);
const formatted: string[] = [];
const format = async (file: string) => {
  formatted.push(path.basename(file));
  await run(mkfs!, [...MKFS_OPTIONS, file]);
};

/** Whether `file` holds an ext4 filesystem: the superblock's magic number 0xEF53 at byte 1080. */
function isExt4(file: string): boolean {
  const fd = fs.openSync(file, "r");
  try {
    const magic = Buffer.alloc(2);
    fs.readSync(fd, magic, 0, 2, 1024 + 56);
    return magic.readUInt16LE(0) === 0xef53;
  } finally {
    fs.closeSync(fd);
  }
}

describe.skipIf(!mkfs)("storage images", () => {
  const spares = path.join(root, "spares");
  const sandbox = (n: number) => {
    fs.mkdirSync(path.join(root, `sb${n}`), { recursive: true });
    return path.join(root, `sb${n}`, "root.img");
  };
  const size = 2 * MIN_STORAGE_BYTES;

  it("formats an image when no spare is ready, keeps a spare after the start, and hands it out next", async () => {
    // Left by a process that ended while it formatted: never a spare.
    fs.mkdirSync(spares, { recursive: true });
    fs.writeFileSync(path.join(spares, `${size}.img.dead.tmp`), "half");
    const images = createStorageImages(spares, format);

    const first = await images.ensure(sandbox(1), size);
    expect(first).toEqual({ size, created: true, spare: false });
    expect(fs.statSync(sandbox(1)).size).toBe(size);
    expect(isExt4(sandbox(1))).toBe(true);
    expect(fs.readdirSync(spares)).toEqual([]);

    images.replenish();
    await images.settle();
    expect(fs.readdirSync(spares)).toEqual([`${size}.img`]);

    formatted.length = 0;
    const second = await images.ensure(sandbox(2), size);
    expect(second).toEqual({ size, created: true, spare: true });
    expect(formatted).toEqual([]);
    expect(isExt4(sandbox(2))).toBe(true);
    expect(fs.readdirSync(spares)).toEqual([]);

    // An image that exists stays as it is, whatever size is asked for now.
    fs.writeFileSync(path.join(root, "sb2", "marker"), "");
    expect(await images.ensure(sandbox(2), 4 * size)).toEqual({ size, created: false, spare: false });
  });

  it("gives one spare to one start: two starts at once each get a whole image", async () => {
    const images = createStorageImages(spares, format);
    await images.ensure(sandbox(3), size);
    images.replenish();
    await images.settle();
    const [a, b] = await Promise.all([images.ensure(sandbox(4), size), images.ensure(sandbox(5), size)]);
    expect([a.spare, b.spare].sort()).toEqual([false, true]);
    expect(isExt4(sandbox(4)) && isExt4(sandbox(5))).toBe(true);
    expect(fs.statSync(sandbox(4)).ino).not.toBe(fs.statSync(sandbox(5)).ino);
  });

  it("a failed format leaves no file behind, and a failed spare does not fail anything", async () => {
    const images = createStorageImages(path.join(root, "failing"), () => Promise.reject(new Error("mkfs failed")));
    await expect(images.ensure(sandbox(6), size)).rejects.toThrow("mkfs failed");
    expect(fs.existsSync(sandbox(6))).toBe(false);
    images.replenish();
    await images.settle();
    expect(fs.readdirSync(path.join(root, "failing"))).toEqual([]);
  });
});

// Spare storage images, formatted with the real mkfs.ext4 where the machine has it.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
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

  it("a spare mounted ahead comes with its holder's socket, moved beside the image; the holder ends after the start", async () => {
    const dir = path.join(root, "held");
    const ended: string[] = [];
    /** A stand-in holder: a listening socket at `socket`, as sandbox-launch --premount makes. */
    const premount = async (file: string, socket: string) => {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(socket, resolve));
      return {
        end: () => {
          ended.push(path.basename(file));
          server.close();
        },
      };
    };
    const images = createStorageImages(dir, format, premount);
    expect((await images.ensure(sandbox(7), size)).premounted).toBeUndefined();
    images.replenish();
    await images.settle();
    expect(fs.readdirSync(dir).sort()).toEqual([`${size}.img`, `${size}.sock`]);

    const taken = await images.ensure(sandbox(8), size);
    expect(taken).toEqual({ size, created: true, spare: true, premounted: path.join(root, "sb8", "premount.sock") });
    expect(fs.statSync(taken.premounted!).isSocket()).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(ended).toEqual([]);
    images.release(sandbox(8));
    expect(ended).toHaveLength(1);
    // A spare left held when the images close: its holder ends with them.
    images.replenish();
    await images.settle();
    await images.close();
    expect(ended).toHaveLength(2);
    // A holder that cannot be had leaves a plain spare.
    const plain = createStorageImages(path.join(root, "unheld"), format, () => Promise.reject(new Error("no loop")));
    await plain.ensure(sandbox(9), size);
    plain.replenish();
    await plain.settle();
    expect(fs.readdirSync(path.join(root, "unheld"))).toEqual([`${size}.img`]);
    expect(await plain.ensure(sandbox(10), size)).toEqual({ size, created: true, spare: true });
  });

  it("a start while a spare is being made waits for it rather than formatting its own", async () => {
    const images = createStorageImages(path.join(root, "coming"), format);
    await images.ensure(sandbox(11), size);
    formatted.length = 0;
    images.replenish();
    expect(await images.ensure(sandbox(12), size)).toEqual({ size, created: true, spare: true });
    // The spare's format only: none of its own.
    expect(formatted).toHaveLength(1);
    // Two at once: one gets the spare on its way, the other formats its own.
    images.replenish();
    const [a, b] = await Promise.all([images.ensure(sandbox(13), size), images.ensure(sandbox(14), size)]);
    expect([a.spare, b.spare].sort()).toEqual([false, true]);
    await images.settle();
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

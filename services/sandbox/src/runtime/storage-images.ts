// The ext4 images that hold sandboxes' files, made ahead of the starts that need them.
// Formatting an image (mkfs.ext4) was part of every cold start: 30-60 ms of the program itself,
// plus the fork of the service's process that ran it, which in a large process holds the event
// loop for tens of milliseconds more. So one formatted, empty image per size is kept ready in
// `<dataDir>/spare-images/<bytes>.img`: a start takes it by renaming it to the sandbox's
// directory (the same filesystem, so instant and atomic: two starts cannot both get it), and a
// new spare is made in the background through the runtime's launcher, never by forking the
// service. A start that finds no spare formats its own image, as before, also through the
// launcher. Spares are only ever complete (formatted under a temporary name, then renamed).
// Mounting an image cost a start tens of milliseconds more on a loaded machine (the mount waits
// on the image's I/O), so a spare is also mounted ahead where the launcher can: as a detached
// mount, in no mount namespace, held by a small process that hands it to the launcher of the
// start that takes the spare, through a socket beside it (`<bytes>.sock`), and then ends
// (sandbox-launch.c, --premount). The launcher checks that the mount is of the image it was
// given, and mounts the image itself when it cannot have it.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { MIN_STORAGE_BYTES } from "./limits.js";

/** Runs mkfs.ext4 (or a stand-in) on `file` to its end; rejects when it fails. */
export type FormatImage = (file: string) => Promise<void>;

/** A process holding a formatted image's mount until a launcher takes it. */
export interface ImageHolder {
  /** Ends the holder (and with it the mount) if it still runs. */
  end(): void;
}

/**
 * Mounts the formatted image `file` ahead, held for the launcher at the unix socket `socket`;
 * resolves once it is held, rejects when it cannot be.
 */
export type PremountImage = (file: string, socket: string) => Promise<ImageHolder>;

export interface StorageImages {
  /**
   * The image at `imagePath`: kept when it exists (a template's storage size does not change
   * under a sandbox), otherwise a spare of the size moved there (waiting for one being made),
   * otherwise formatted now.
   */
  ensure(
    imagePath: string,
    bytes: number,
  ): Promise<{ size: number; created: boolean; spare: boolean; premounted?: string | undefined }>;
  /** The start that took the image at `imagePath` is over: its holder, should it still run, ends. */
  release(imagePath: string): void;
  /**
   * Makes a spare of every size used so far, in the background, unless one is there or on its
   * way. Called once a start is over, so that formatting does not take CPU from that start.
   */
  replenish(): void;
  /** Resolves once the spares being made are done (a close, tests). */
  settle(): Promise<void>;
  /** Settles, then ends every holder: the mounts held ahead go with them. */
  close(): Promise<void>;
}

/** The options of mkfs.ext4 for a sandbox image: all space to the sandbox, lazy initialisation. */
export const MKFS_OPTIONS = ["-q", "-F", "-m", "0", "-E", "lazy_itable_init=1,lazy_journal_init=1"] as const;

/**
 * debugfs's arguments that remove mkfs's empty lost+found from an image, before any start: the
 * launcher removes it otherwise, after the mount, where an rmdir on the fresh file system took
 * 15-50 ms of the start on a busy machine.
 */
export const REMOVE_LOST_FOUND = ["-w", "-R", "rmdir lost+found"] as const;

async function syncFile(file: string): Promise<void> {
  const handle = await fs.promises.open(file, "r+");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A sparse file of `size` bytes at `file`, formatted and written back. */
async function formatImageFile(file: string, size: number, format: FormatImage): Promise<void> {
  const fd = fs.openSync(file, "w", 0o600);
  try {
    fs.ftruncateSync(fd, size);
  } finally {
    fs.closeSync(fd);
  }
  await format(file);
  // Written back now, while no start waits: the loop device's direct I/O would otherwise flush
  // mkfs's pages when the image is attached, on the start's path.
  await syncFile(file);
}

/**
 * Temporary files of a process that ended while it formatted are never completed, and the
 * sockets' holders ended with the process that started them: both are removed.
 */
function removeLeftovers(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith(".tmp") || name.endsWith(".sock")) fs.rmSync(path.join(dir, name), { force: true });
  }
}

export function createStorageImages(dir: string, format: FormatImage, premount?: PremountImage): StorageImages {
  /** Spares being made, by size. */
  const making = new Map<number, Promise<void>>();
  /** The holder of each spare mounted ahead, by size; then of each image taken, by its path. */
  const held = new Map<number, ImageHolder>();
  const taken = new Map<string, ImageHolder>();
  /** The sizes sandboxes have needed: a spare of each is kept. */
  const sizes = new Set<number>();
  let cleaned = false;

  function cleanOnce(): void {
    if (cleaned) return;
    cleaned = true;
    removeLeftovers(dir);
  }

  /** Mounts a spare ahead: its socket published first, so that a spare's socket is always there with it. */
  async function hold(temp: string, size: number): Promise<void> {
    if (!premount) return;
    const socket = `${temp}.sock.tmp`;
    const holder = await premount(temp, socket).catch(() => undefined);
    if (!holder) return;
    try {
      fs.renameSync(socket, path.join(dir, `${size}.sock`));
      held.set(size, holder);
    } catch {
      holder.end();
    }
  }

  async function make(target: string, size: number, spare = false): Promise<void> {
    const temp = `${target}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await formatImageFile(temp, size, format);
      if (spare) await hold(temp, size);
      fs.renameSync(temp, target);
    } catch (error) {
      fs.rmSync(temp, { force: true });
      throw error;
    }
  }

  function refill(size: number): void {
    if (making.has(size)) return;
    const spare = path.join(dir, `${size}.img`);
    if (fs.existsSync(spare)) return;
    // A spare that cannot be made is no failure: the next start formats its own image, and
    // reports what stops that.
    const done = make(spare, size, true)
      .catch(() => undefined)
      .finally(() => making.delete(size));
    making.set(size, done);
  }

  return {
    async ensure(imagePath, bytes) {
      if (fs.existsSync(imagePath)) return { size: fs.statSync(imagePath).size, created: false, spare: false };
      cleanOnce();
      const size = Math.max(bytes, MIN_STORAGE_BYTES);
      sizes.add(size);
      const claim = () => {
        try {
          fs.renameSync(path.join(dir, `${size}.img`), imagePath);
          return true;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
          return false;
        }
      };
      let spare = claim();
      // A spare on its way is nearer than a format of this start's own, which would also take
      // the CPU and disk from it: waited for, then claimed if no other start took it first.
      const coming = making.get(size);
      if (!spare && coming) {
        await coming;
        spare = claim();
      }
      if (!spare) {
        await make(imagePath, size);
        return { size, created: true, spare };
      }
      // Taken with the spare, in the same turn: no other spare of the size can be there yet.
      const holder = held.get(size);
      held.delete(size);
      if (!holder) return { size, created: true, spare };
      const premounted = path.join(path.dirname(imagePath), "premount.sock");
      try {
        fs.renameSync(path.join(dir, `${size}.sock`), premounted);
      } catch {
        holder.end();
        return { size, created: true, spare };
      }
      taken.set(imagePath, holder);
      return { size, created: true, spare, premounted };
    },
    release(imagePath) {
      taken.get(imagePath)?.end();
      taken.delete(imagePath);
    },
    replenish() {
      for (const size of sizes) refill(size);
    },
    async close() {
      await Promise.all(making.values());
      for (const holder of [...held.values(), ...taken.values()]) holder.end();
      held.clear();
      taken.clear();
    },
    async settle() {
      await Promise.all(making.values());
    },
  };
}

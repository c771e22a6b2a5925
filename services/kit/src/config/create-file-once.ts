import { randomBytes } from "node:crypto";
import { link, mkdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Writes `content` to `file` (mode 0600, parent 0700) unless the file exists. Safe when several
 * processes race: each writes a private temporary file and hard-links it into place, which fails
 * for all but the first; everyone then reads the winner's file.
 */
export async function createFileOnce(file: string, content: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  await writeFile(tmp, content, { mode: 0o600, flag: "wx" });
  try {
    await link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    await unlink(tmp);
  }
}

// The files of the built docs site, looked up once each: a path outside the build folder, or not a
// file, does not exist; precompressed `.br` and `.gz` siblings are noted for sending.
import { existsSync, statSync } from "node:fs";
import { join, normalize, sep } from "node:path";

export interface FileEntry {
  path: string;
  size: number;
  etag: string;
  encodings: { br?: string; gzip?: string };
}

/** A lookup of paths relative to `dist` (already normalized). */
export function createDistFiles(dist: string): (relative: string) => FileEntry | null {
  const cache = new Map<string, FileEntry | null>();
  return (relative: string): FileEntry | null => {
    if (cache.has(relative)) return cache.get(relative)!;
    const path = normalize(join(dist, relative));
    let entry: FileEntry | null = null;
    // normalize() resolves "..": anything that ends up outside the build folder does not exist.
    if ((path === dist || path.startsWith(dist + sep)) && existsSync(path) && statSync(path).isFile()) {
      const stat = statSync(path);
      entry = {
        path,
        size: stat.size,
        etag: `"${stat.size.toString(36)}-${Math.floor(stat.mtimeMs).toString(36)}"`,
        encodings: {
          ...(existsSync(`${path}.br`) ? { br: `${path}.br` } : {}),
          ...(existsSync(`${path}.gz`) ? { gzip: `${path}.gz` } : {}),
        },
      };
    }
    cache.set(relative, entry);
    return entry;
  };
}

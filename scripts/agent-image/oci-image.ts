// An OCI image (image-spec v1.1) written without Docker: a gzip'd tar layer, a config and a
// manifest, each a blob named by its sha256, under an index, as a layout directory and as the
// `oci-archive` tarball of that directory. Everything is a function of the files given: entries
// sorted, owned by uid 0, dated 1970, no build time in the config (docs/adr/0272).
import { createHash } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";

export const mediaTypes = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const;

/** A file or directory of a tar archive; a directory's path ends in `/`. */
export interface TarEntry {
  readonly path: string;
  readonly mode: number;
  readonly data?: Buffer | undefined;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

/** One ustar header: owner 0:0 with no names, mtime 0. */
function tarHeader(entry: TarEntry): Buffer {
  const header = Buffer.alloc(BLOCK);
  const name = Buffer.from(entry.path, "utf8");
  // Every path here is short; a longer one would need the ustar prefix field or PAX headers.
  if (name.length > 100) throw new Error(`tar path ${entry.path} is longer than 100 bytes`);
  const isDir = entry.path.endsWith("/");
  name.copy(header, 0);
  header.write(octal(entry.mode, 8), 100, "ascii");
  header.write(octal(0, 8), 108, "ascii");
  header.write(octal(0, 8), 116, "ascii");
  header.write(octal(isDir ? 0 : (entry.data?.length ?? 0), 12), 124, "ascii");
  header.write(octal(0, 12), 136, "ascii");
  header.write(isDir ? "5" : "0", 156, "ascii");
  header.write("ustar\0", 257, "ascii");
  header.write("00", 263, "ascii");
  header.write(octal(0, 8), 329, "ascii");
  header.write(octal(0, 8), 337, "ascii");
  // The checksum is computed with its own field as spaces.
  header.fill(" ", 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return header;
}

/** A tar archive of the entries, in path order whatever order they are given in. */
export function tarOf(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    parts.push(tarHeader(entry));
    if (entry.path.endsWith("/") || !entry.data) continue;
    parts.push(entry.data);
    const pad = (BLOCK - (entry.data.length % BLOCK)) % BLOCK;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

export function sha256(data: Buffer): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly platform?: { readonly architecture: string; readonly os: string };
  readonly annotations?: Record<string, string>;
}

export interface ImageInput {
  /** The files of the one layer (FROM scratch). */
  readonly files: readonly TarEntry[];
  /** A GOARCH-style architecture: `amd64`, `arm64`. */
  readonly architecture: string;
  readonly entrypoint: readonly string[];
  /** The tag the index names the image by (`org.opencontainers.image.ref.name`). */
  readonly refName: string;
  /** Annotations of the manifest and labels of the config (title, version, source). */
  readonly annotations: Record<string, string>;
}

export interface OciImage {
  /** Every blob by its digest. */
  readonly blobs: ReadonlyMap<string, Buffer>;
  readonly index: Buffer;
  readonly manifest: Descriptor;
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), "utf8");
}

function blobDescriptor(blobs: Map<string, Buffer>, mediaType: string, data: Buffer): Descriptor {
  const digest = sha256(data);
  blobs.set(digest, data);
  return { mediaType, digest, size: data.length };
}

/** The image's blobs and index. */
export function ociImage(input: ImageInput): OciImage {
  const blobs = new Map<string, Buffer>();
  const layerTar = tarOf(input.files);
  // Level 9 and Node's zlib: the gzip header carries no time or name, so the bytes follow the tar.
  const layer = blobDescriptor(blobs, mediaTypes.layer, gzipSync(layerTar, { level: 9 }));
  const config = blobDescriptor(
    blobs,
    mediaTypes.config,
    json({
      architecture: input.architecture,
      os: "linux",
      config: { Entrypoint: input.entrypoint, Labels: input.annotations },
      rootfs: { type: "layers", diff_ids: [sha256(layerTar)] },
    }),
  );
  const manifest = blobDescriptor(
    blobs,
    mediaTypes.manifest,
    json({
      schemaVersion: 2,
      mediaType: mediaTypes.manifest,
      config,
      layers: [layer],
      annotations: input.annotations,
    }),
  );
  const described: Descriptor = {
    ...manifest,
    platform: { architecture: input.architecture, os: "linux" },
    annotations: { "org.opencontainers.image.ref.name": input.refName },
  };
  const index = json({ schemaVersion: 2, mediaType: mediaTypes.index, manifests: [described] });
  return { blobs, index, manifest: described };
}

/** The files of the image's layout directory, by path inside it. */
export function layoutFiles(image: OciImage): Map<string, Buffer> {
  const files = new Map<string, Buffer>([
    ["oci-layout", json({ imageLayoutVersion: "1.0.0" })],
    ["index.json", image.index],
  ]);
  for (const [digest, data] of image.blobs) files.set(`blobs/sha256/${digest.slice("sha256:".length)}`, data);
  return files;
}

/** Writes the layout directory at `dir` (replacing it) and the `oci-archive` tarball at `archive`. */
export function writeOciImage(image: OciImage, dir: string, archive: string): void {
  const files = layoutFiles(image);
  rmSync(dir, { recursive: true, force: true });
  for (const [path, data] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), data);
  }
  const entries: TarEntry[] = [
    { path: "blobs/", mode: 0o755 },
    { path: "blobs/sha256/", mode: 0o755 },
    ...[...files].map(([path, data]) => ({ path, mode: 0o644, data })),
  ];
  mkdirSync(dirname(archive), { recursive: true });
  writeFileSync(archive, tarOf(entries));
}

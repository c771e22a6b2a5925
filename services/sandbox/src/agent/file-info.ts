// A file's stat as the API's FileInfo.
import * as fs from "node:fs";
import { create } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { type FileInfo, FileInfoSchema, FileType } from "@aiem/proto/enginemanager/sandbox/v1/file_info_pb.js";

export function fileType(st: fs.BigIntStats): FileType {
  if (st.isFile()) return FileType.REGULAR;
  if (st.isDirectory()) return FileType.DIRECTORY;
  if (st.isSymbolicLink()) return FileType.SYMLINK;
  return FileType.UNSPECIFIED;
}

export function timestamp(ns: bigint): Timestamp {
  return create(TimestampSchema, { seconds: ns / 1_000_000_000n, nanos: Number(ns % 1_000_000_000n) });
}

export function octalMode(mode: number | bigint): string {
  return (Number(mode) & 0o7777).toString(8).padStart(4, "0");
}

export function toFileInfo(path: string, st: fs.BigIntStats): FileInfo {
  return create(FileInfoSchema, {
    path,
    size: st.size,
    type: fileType(st),
    modifyTime: timestamp(st.mtimeNs),
    mode: octalMode(st.mode),
  });
}

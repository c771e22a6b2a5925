// The rows of secrets and their versions: what lists filter and sort on, and the loads every
// secret call shares.
import { sql } from "kysely";
import type { FieldTable } from "@aiem/kit/aip";
import type { Executor } from "./store.js";

export const SECRET_RESOURCE_TYPE = "enginemanager.ai/Secret";
export const SECRET_VERSION_RESOURCE_TYPE = "enginemanager.ai/SecretVersion";
export const LATEST = "latest";

export const secretFields: FieldTable = {
  name: { type: "string", sql: sql.ref("name") },
  display_name: { type: "string", sql: sql.ref("display_name") },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  update_time: { type: "timestamp", sql: sql.ref("update_time") },
};

export const versionFields: FieldTable = {
  version: { type: "int", sql: sql.ref("version") },
};

export interface SecretRow {
  uid: string;
  last_version: bigint;
  resource: Uint8Array;
}

export async function loadSecret(
  exec: Executor,
  workspace: string,
  id: string,
  forUpdate = false,
): Promise<SecretRow | undefined> {
  let q = exec
    .selectFrom("secrets")
    .select(["uid", "last_version", "resource"])
    .where("workspace", "=", workspace)
    .where("id", "=", id);
  if (forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) as SecretRow | undefined;
}

/** The number of a version id (`latest` resolved), or undefined when the secret has no such version. */
export async function resolveVersion(
  exec: Executor,
  workspace: string,
  secretId: string,
  versionId: string,
): Promise<bigint | undefined> {
  if (versionId !== LATEST) return BigInt(versionId);
  const row = (await exec
    .selectFrom("secret_versions")
    .select(sql<bigint>`max(version)`.as("v"))
    .where("workspace", "=", workspace)
    .where("secret_id", "=", secretId)
    .executeTakeFirst()) as { v: bigint | string | null } | undefined;
  return row?.v === null || row?.v === undefined ? undefined : BigInt(row.v);
}

export interface VersionRow {
  version: bigint;
  resource: Uint8Array;
  key_id: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

export async function loadVersion(
  exec: Executor,
  workspace: string,
  secretId: string,
  version: bigint,
): Promise<VersionRow | undefined> {
  return (await exec
    .selectFrom("secret_versions")
    .select(["version", "resource", "key_id", "nonce", "ciphertext"])
    .where("workspace", "=", workspace)
    .where("secret_id", "=", secretId)
    .where("version", "=", version)
    .executeTakeFirst()) as VersionRow | undefined;
}

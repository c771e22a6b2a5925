// The SecretVersionService calls: adding a value (encrypted before it reaches the database, and
// only by the secret's owner) and reading versions' metadata. No call answers with a value.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { paginate, secretPattern, secretVersionPattern } from "@aiem/kit/aip";
import { Action, Kind } from "@aiem/kit/authz";
import { invalidArgument, notFound } from "@aiem/kit/errors";
import { principalOf } from "@aiem/kit/server";
import { SecretSchema } from "@aiem/proto/enginemanager/v1/secret_pb.js";
import { SecretVersionSchema, type SecretVersion } from "@aiem/proto/enginemanager/v1/secret_version_pb.js";
import type {
  AddSecretVersionRequest,
  ListSecretVersionsRequest,
  SecretVersionService,
} from "@aiem/proto/enginemanager/v1/secret_version_service_pb.js";
import { secretAad, type SecretCipher } from "./secret-cipher.js";
import { checkSecretOwner } from "./secret-owner.js";
import {
  SECRET_RESOURCE_TYPE,
  SECRET_VERSION_RESOURCE_TYPE,
  loadSecret,
  loadVersion,
  resolveVersion,
  versionFields,
  type SecretRow,
} from "./secret-store.js";
import type { ServiceContext } from "./service-context.js";
import type { Executor } from "./store.js";

/** Largest secret value, in bytes. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

export interface SecretVersionDeps {
  readonly context: ServiceContext;
  /** The cipher of the secrets key, once the catalogue is started. */
  cipher(): SecretCipher;
}

export function createSecretVersionHandlers(deps: SecretVersionDeps): ServiceImpl<typeof SecretVersionService> {
  const { context } = deps;
  const db = () => context.database().db;
  return {
    addSecretVersion: (req, ctx) => addSecretVersion(deps, req, ctx),
    async getSecretVersion(req, ctx) {
      const { workspace, secret: secretId, version: versionId } = secretVersionPattern.parse(req.name, "name");
      context.policy.check(principalOf(ctx), Action.GET, Kind.secretVersions, workspace);
      const number = await resolveVersion(db(), workspace, secretId, versionId);
      const row = number === undefined ? undefined : await loadVersion(db(), workspace, secretId, number);
      if (!row) throw notFound(req.name, SECRET_VERSION_RESOURCE_TYPE);
      return { secretVersion: fromBinary(SecretVersionSchema, row.resource) };
    },
    listSecretVersions: (req, ctx) => listSecretVersions(context, req, ctx),
  };
}

async function addSecretVersion(
  { context, cipher }: SecretVersionDeps,
  req: AddSecretVersionRequest,
  ctx: HandlerContext,
) {
  const principal = principalOf(ctx);
  const { workspace, secret: secretId } = secretPattern.parse(req.parent, "parent");
  context.policy.check(principal, Action.CREATE, Kind.secretVersions, workspace);
  const value = req.secretVersion?.value;
  if (!value || value.length === 0) throw invalidArgument("secret_version.value", "is required: 1 byte to 64 KiB");
  if (value.length > MAX_SECRET_VALUE_BYTES) {
    throw invalidArgument(
      "secret_version.value",
      `must be at most ${MAX_SECRET_VALUE_BYTES} bytes (got ${value.length})`,
    );
  }
  const c = cipher();
  const now = context.now();
  const added = await context.write(async (trx) => {
    const secret = await loadSecret(trx, workspace, secretId, true);
    if (!secret) throw notFound(req.parent, SECRET_RESOURCE_TYPE);
    checkSecretOwner(context.policy, principal, fromBinary(SecretSchema, secret.resource), "add versions to");
    const number = BigInt(secret.last_version) + 1n;
    const version = create(SecretVersionSchema, {
      name: secretVersionPattern.format({ workspace, secret: secretId, version: number.toString() }),
      createTime: timestampFromDate(now),
      creator: principal.name,
      creatorDisplayName: principal.displayName,
    });
    await insertVersion(trx, { workspace, secretId, secret, number, version, value, cipher: c, now });
    return version;
  });
  return { secretVersion: added };
}

/** Stores a new version's encrypted value and makes it its secret's last version. */
async function insertVersion(
  trx: Executor,
  row: {
    workspace: string;
    secretId: string;
    secret: SecretRow;
    number: bigint;
    version: SecretVersion;
    value: Uint8Array;
    cipher: SecretCipher;
    now: Date;
  },
): Promise<void> {
  const { workspace, secretId, number, version } = row;
  const { nonce, ciphertext } = row.cipher.encrypt(row.value, secretAad(row.secret.uid, version.name));
  await trx
    .insertInto("secret_versions")
    .values({
      workspace,
      secret_id: secretId,
      version: number,
      name: version.name,
      create_time: row.now,
      resource: toBinary(SecretVersionSchema, version),
      key_id: row.cipher.keyId,
      nonce,
      ciphertext,
    })
    .execute();
  await trx
    .updateTable("secrets")
    .set({ last_version: number })
    .where("workspace", "=", workspace)
    .where("id", "=", secretId)
    .execute();
}

async function listSecretVersions(context: ServiceContext, req: ListSecretVersionsRequest, ctx: HandlerContext) {
  const { workspace, secret: secretId } = secretPattern.parse(req.parent, "parent");
  context.policy.check(principalOf(ctx), Action.LIST, Kind.secretVersions, workspace);
  const db = context.database().db;
  if (!(await loadSecret(db, workspace, secretId))) throw notFound(req.parent, SECRET_RESOURCE_TYPE);
  const query = db
    .selectFrom("secret_versions")
    .select("resource")
    .where("workspace", "=", workspace)
    .where("secret_id", "=", secretId);
  const page = await paginate(query, {
    parent: req.parent,
    pageSize: req.pageSize,
    pageToken: req.pageToken,
    orderBy: "version desc",
    table: versionFields,
    tiebreaker: { name: "version", spec: versionFields.version! },
    tokens: context.tokens(),
    scope: "secretVersions",
  });
  return {
    secretVersions: page.rows.map((r) => fromBinary(SecretVersionSchema, (r as { resource: Uint8Array }).resource)),
    nextPageToken: page.nextPageToken,
  };
}

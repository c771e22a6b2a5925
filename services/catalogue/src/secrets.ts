// Secrets and their versions. A version's value is encrypted with AES-256-GCM under the secrets
// key before it reaches the database, bound (as additional authenticated data) to the version's
// name and its secret's uid, so a ciphertext copied onto another row does not decrypt. No call,
// event or log line ever carries a value; resolveSecretValue is the only way back, for the
// sandbox service acting for an authorised caller.
//
// A secret belongs to its creator. Reading its metadata (names, times, who made it) is a
// workspace read like any other; revealing its value, adding versions and deleting it need the
// workspace's write right AND ownership: the creator, or an administrator. Every reveal is
// recorded first as a SecretVersionRevealed event (the audit trail), so a reveal that cannot be
// recorded does not happen.
import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from "node:crypto";
import { clone, create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { sql } from "kysely";
import {
  checkField,
  paginate,
  secretPattern,
  secretVersionPattern,
  validateResourceId,
  workspacePattern,
  type FieldTable,
} from "@aiem/kit/aip";
import { Action, Kind } from "@aiem/kit/authz";
import {
  alreadyExists,
  internalError,
  invalidArgument,
  notFound,
  permissionDenied,
  requiredField,
} from "@aiem/kit/errors";
import { enqueue, eventSubject } from "@aiem/kit/events";
import type { Principal } from "@aiem/kit/identity";
import { principalOf, registerGuarded } from "@aiem/kit/server";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import {
  SecretVersionRevealedSchema,
  type SecretVersionRevealed_Target,
} from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import { SecretSchema, type Secret } from "@aiem/proto/enginemanager/v1/secret_pb.js";
import { SecretService } from "@aiem/proto/enginemanager/v1/secret_service_pb.js";
import { SecretVersionSchema } from "@aiem/proto/enginemanager/v1/secret_version_pb.js";
import { SecretVersionService } from "@aiem/proto/enginemanager/v1/secret_version_service_pb.js";
import { orEmpty, type Runtime } from "./runtime.js";
import { EVENT_SOURCE, clearOutputOnly, nameTiebreaker, stampCreate, stampUpdate, type Executor } from "./store.js";
import { Violations, annotationKeyRule, checkDisplayName, checkStringMap } from "./validation.js";

export const SECRET_RESOURCE_TYPE = "enginemanager.ai/Secret";
export const SECRET_VERSION_RESOURCE_TYPE = "enginemanager.ai/SecretVersion";
/** Largest secret value, in bytes. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;
export const LATEST = "latest";

// ---- encryption ---------------------------------------------------------------------------------

export interface SecretCipher {
  /** Short fingerprint of the key, stored beside each ciphertext to tell a wrong key from damage. */
  readonly keyId: string;
  encrypt(plaintext: Uint8Array, aad: string): { nonce: Uint8Array; ciphertext: Uint8Array };
  decrypt(nonce: Uint8Array, ciphertext: Uint8Array, aad: string): Uint8Array;
}

export function createSecretCipher(key: Uint8Array): SecretCipher {
  if (key.length !== 32) throw new Error("the secrets key must be 32 bytes");
  const k = Buffer.from(key);
  const keyId = createHash("sha256").update("aiem-secrets-key-id").update(k).digest("hex").slice(0, 16);
  return {
    keyId,
    encrypt(plaintext, aad) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", k, nonce);
      cipher.setAAD(Buffer.from(aad, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return { nonce, ciphertext: Buffer.concat([body, cipher.getAuthTag()]) };
    },
    decrypt(nonce, ciphertext, aad) {
      const data = Buffer.from(ciphertext);
      const decipher = createDecipheriv("aes-256-gcm", k, Buffer.from(nonce));
      decipher.setAAD(Buffer.from(aad, "utf8"));
      decipher.setAuthTag(data.subarray(data.length - 16));
      return new Uint8Array(Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]));
    },
  };
}

function aadOf(uid: string, versionName: string): string {
  return `${uid}\n${versionName}`;
}

// ---- storage ------------------------------------------------------------------------------------

const secretFields: FieldTable = {
  name: { type: "string", sql: sql.ref("name") },
  display_name: { type: "string", sql: sql.ref("display_name") },
  create_time: { type: "timestamp", sql: sql.ref("create_time") },
  update_time: { type: "timestamp", sql: sql.ref("update_time") },
};

const versionFields: FieldTable = {
  version: { type: "int", sql: sql.ref("version") },
};

interface SecretRow {
  uid: string;
  last_version: bigint;
  resource: Uint8Array;
}

async function loadSecret(
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
async function resolveVersion(
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

interface VersionRow {
  version: bigint;
  resource: Uint8Array;
  key_id: string;
  nonce: Uint8Array;
  ciphertext: Uint8Array;
}

async function loadVersion(
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

// ---- handlers -----------------------------------------------------------------------------------

export interface SecretsDeps {
  readonly runtime: Runtime;
  cipher(): SecretCipher;
}

/** Where a revealed value goes: what the audit event records besides who and which version. */
export interface SecretReveal {
  /** `workspaces/{workspace}/sandboxEngines/{id}` */
  readonly sandboxEngine: string;
  readonly target: SecretVersionRevealed_Target;
  /** The file's path or the environment variable's name. */
  readonly destination: string;
  /** The process, for an environment variable. */
  readonly process?: string;
}

/** The subject of a secret's audit events: `enginemanager.secrets.<workspace>.<id>.revealed`. */
export function secretRevealedSubject(workspace: string, secretId: string): string {
  return eventSubject("secrets", workspace, secretId, "revealed");
}

export interface ResolvedSecretValue {
  /** The version's full name with its real id (`.../versions/3` when `latest` was asked for). */
  readonly name: string;
  readonly value: Uint8Array;
}

export function createSecretHandlers({ runtime, cipher }: SecretsDeps) {
  const { policy } = runtime;
  const db = () => runtime.database().db;

  /**
   * Owner's rights on a secret the caller may already act on in its workspace: its creator, or
   * an administrator. Everyone who can read the workspace sees that the secret exists (get and
   * list), so refusing with PERMISSION_DENIED hides nothing that NOT_FOUND would.
   */
  const checkOwner = (principal: Principal, secret: Secret, verb: string): void => {
    if (secret.creator === principal.name || policy.isAdmin(principal)) return;
    throw permissionDenied(
      `permission denied: ${principal.name} may not ${verb} ${secret.name}: only the secret's creator or an administrator may`,
    );
  };

  const secretService = {
    async createSecret(req: Req, ctx: HandlerContext) {
      const principal = principalOf(ctx);
      const { workspace } = workspacePattern.parse(req.parent, "parent");
      policy.check(principal, Action.CREATE, Kind.secrets, workspace);
      const id: string = req.secretId ?? "";
      if (id === "") throw requiredField("secret_id");
      checkField("secret_id", id, validateResourceId);
      const secret = clone(SecretSchema, orEmpty(SecretSchema, req.secret));
      clearOutputOnly(SecretSchema, secret as never);
      const v = new Violations("secret");
      checkDisplayName(v, "display_name", secret.displayName);
      checkStringMap(v, "annotations", secret.annotations, annotationKeyRule);
      v.throwIfAny();
      const now = runtime.now();
      secret.name = secretPattern.format({ workspace, secret: id });
      secret.uid = randomUUID();
      stampCreate(secret, principal, now);
      // A secret names its last writer from creation on: its versions are its updates.
      stampUpdate(secret, principal, now);
      const inserted = await runtime.write(async (trx) => {
        const row = await trx
          .insertInto("secrets")
          .values({
            workspace,
            id,
            name: secret.name,
            uid: secret.uid,
            display_name: secret.displayName,
            create_time: now,
            update_time: now,
            resource: toBinary(SecretSchema, secret),
          })
          .onConflict((oc) => oc.columns(["workspace", "id"]).doNothing())
          .returning("id")
          .executeTakeFirst();
        return row !== undefined;
      });
      if (!inserted) throw alreadyExists(secret.name, SECRET_RESOURCE_TYPE);
      return { secret };
    },

    async getSecret(req: Req, ctx: HandlerContext) {
      const { workspace, secret: id } = secretPattern.parse(req.name, "name");
      policy.check(principalOf(ctx), Action.GET, Kind.secrets, workspace);
      const row = await loadSecret(db(), workspace, id);
      if (!row) throw notFound(req.name, SECRET_RESOURCE_TYPE);
      return { secret: fromBinary(SecretSchema, row.resource) };
    },

    async listSecrets(req: Req, ctx: HandlerContext) {
      const { workspace } = workspacePattern.parse(req.parent, "parent");
      policy.check(principalOf(ctx), Action.LIST, Kind.secrets, workspace);
      const page = await paginate(db().selectFrom("secrets").select("resource").where("workspace", "=", workspace), {
        parent: req.parent,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        filter: req.filter,
        orderBy: req.orderBy,
        table: secretFields,
        tiebreaker: nameTiebreaker,
        tokens: runtime.tokens(),
        scope: "secrets",
      });
      return {
        secrets: page.rows.map((r) => fromBinary(SecretSchema, (r as { resource: Uint8Array }).resource)),
        nextPageToken: page.nextPageToken,
      };
    },

    async deleteSecret(req: Req, ctx: HandlerContext) {
      const { workspace, secret: id } = secretPattern.parse(req.name, "name");
      const principal = principalOf(ctx);
      policy.check(principal, Action.DELETE, Kind.secrets, workspace);
      const deleted = await runtime.write(async (trx) => {
        const secret = await loadSecret(trx, workspace, id, true);
        if (!secret) return false;
        checkOwner(principal, fromBinary(SecretSchema, secret.resource), "delete");
        // Versions go with it (foreign key, on delete cascade).
        const row = await trx
          .deleteFrom("secrets")
          .where("workspace", "=", workspace)
          .where("id", "=", id)
          .returning("id")
          .executeTakeFirst();
        return row !== undefined;
      });
      if (!deleted) throw notFound(req.name, SECRET_RESOURCE_TYPE);
      return {};
    },
  };

  const versionService = {
    async addSecretVersion(req: Req, ctx: HandlerContext) {
      const principal = principalOf(ctx);
      const { workspace, secret: secretId } = secretPattern.parse(req.parent, "parent");
      policy.check(principal, Action.CREATE, Kind.secretVersions, workspace);
      const value: Uint8Array | undefined = req.secretVersion?.value;
      if (!value || value.length === 0) throw invalidArgument("secret_version.value", "is required: 1 byte to 64 KiB");
      if (value.length > MAX_SECRET_VALUE_BYTES) {
        throw invalidArgument(
          "secret_version.value",
          `must be at most ${MAX_SECRET_VALUE_BYTES} bytes (got ${value.length})`,
        );
      }
      const c = cipher();
      const now = runtime.now();
      const added = await runtime.write(async (trx) => {
        const secret = await loadSecret(trx, workspace, secretId, true);
        if (!secret) throw notFound(req.parent, SECRET_RESOURCE_TYPE);
        checkOwner(principal, fromBinary(SecretSchema, secret.resource), "add versions to");
        const number = BigInt(secret.last_version) + 1n;
        const version = create(SecretVersionSchema, {
          name: secretVersionPattern.format({ workspace, secret: secretId, version: number.toString() }),
          createTime: timestampFromDate(now),
          creator: principal.name,
          creatorDisplayName: principal.displayName,
        });
        const { nonce, ciphertext } = c.encrypt(value, aadOf(secret.uid, version.name));
        await trx
          .insertInto("secret_versions")
          .values({
            workspace,
            secret_id: secretId,
            version: number,
            name: version.name,
            create_time: now,
            resource: toBinary(SecretVersionSchema, version),
            key_id: c.keyId,
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
        return version;
      });
      return { secretVersion: added };
    },

    async getSecretVersion(req: Req, ctx: HandlerContext) {
      const { workspace, secret: secretId, version: versionId } = secretVersionPattern.parse(req.name, "name");
      policy.check(principalOf(ctx), Action.GET, Kind.secretVersions, workspace);
      const number = await resolveVersion(db(), workspace, secretId, versionId);
      const row = number === undefined ? undefined : await loadVersion(db(), workspace, secretId, number);
      if (!row) throw notFound(req.name, SECRET_VERSION_RESOURCE_TYPE);
      return { secretVersion: fromBinary(SecretVersionSchema, row.resource) };
    },

    async listSecretVersions(req: Req, ctx: HandlerContext) {
      const { workspace, secret: secretId } = secretPattern.parse(req.parent, "parent");
      policy.check(principalOf(ctx), Action.LIST, Kind.secretVersions, workspace);
      if (!(await loadSecret(db(), workspace, secretId))) throw notFound(req.parent, SECRET_RESOURCE_TYPE);
      const page = await paginate(
        db()
          .selectFrom("secret_versions")
          .select("resource")
          .where("workspace", "=", workspace)
          .where("secret_id", "=", secretId),
        {
          parent: req.parent,
          pageSize: req.pageSize,
          pageToken: req.pageToken,
          orderBy: "version desc",
          table: versionFields,
          tiebreaker: { name: "version", spec: versionFields.version! },
          tokens: runtime.tokens(),
          scope: "secretVersions",
        },
      );
      return {
        secretVersions: page.rows.map((r) => fromBinary(SecretVersionSchema, (r as { resource: Uint8Array }).resource)),
        nextPageToken: page.nextPageToken,
      };
    },
  };

  /**
   * INTERNAL, not part of the public API: the plaintext of a secret version for its owner (the
   * secret's creator, who must hold ACCESS on secretVersions in the secret's own workspace, which
   * viewers do not) or an administrator. `latest` resolves to the newest version. The reveal is
   * recorded (SecretVersionRevealed) before the value is returned. Throws INVALID_ARGUMENT for a
   * malformed name, PERMISSION_DENIED, or NOT_FOUND naming it.
   */
  async function resolveSecretValue(
    principal: Principal,
    secretVersionName: string,
    reveal: SecretReveal,
  ): Promise<ResolvedSecretValue> {
    const {
      workspace,
      secret: secretId,
      version: versionId,
    } = secretVersionPattern.parse(secretVersionName, "secret_version");
    policy.check(principal, Action.ACCESS, Kind.secretVersions, workspace);
    const exec = db();
    const secret = await loadSecret(exec, workspace, secretId);
    if (!secret) throw notFound(secretVersionName, SECRET_VERSION_RESOURCE_TYPE);
    const meta = fromBinary(SecretSchema, secret.resource);
    checkOwner(principal, meta, "reveal");
    const number = await resolveVersion(exec, workspace, secretId, versionId);
    const row = number === undefined ? undefined : await loadVersion(exec, workspace, secretId, number);
    if (!row) throw notFound(secretVersionName, SECRET_VERSION_RESOURCE_TYPE);
    const name = secretVersionPattern.format({ workspace, secret: secretId, version: BigInt(row.version).toString() });
    const c = cipher();
    if (row.key_id !== c.keyId) {
      runtime.logger.error("secret version was encrypted with another key", { name, keyId: row.key_id });
      throw internalError("the secret cannot be decrypted: the server's secrets key changed (AIEM_SECRETS_KEY)");
    }
    let value: Uint8Array;
    try {
      value = c.decrypt(row.nonce, row.ciphertext, aadOf(secret.uid, name));
    } catch {
      runtime.logger.error("secret version failed authentication", { name });
      throw internalError("the secret cannot be decrypted");
    }
    await recordReveal(principal, workspace, secretId, secret.uid, name, reveal);
    return { name, value };
  }

  /** The audit record of one reveal, through the outbox: durable before the value is handed out. */
  async function recordReveal(
    principal: Principal,
    workspace: string,
    secretId: string,
    uid: string,
    version: string,
    reveal: SecretReveal,
  ): Promise<void> {
    const now = runtime.now();
    const eventId = randomUUID();
    const event = create(EventSchema, {
      id: eventId,
      time: timestampFromDate(now),
      source: EVENT_SOURCE,
      payload: {
        case: "secretVersionRevealed",
        value: create(SecretVersionRevealedSchema, {
          secretVersion: version,
          secretUid: uid,
          principal: principal.name,
          sandboxEngine: reveal.sandboxEngine,
          target: reveal.target,
          destination: reveal.destination,
          process: reveal.process ?? "",
        }),
      },
    });
    await runtime.writeStatement((exec) =>
      enqueue(exec, {
        id: eventId,
        subject: secretRevealedSubject(workspace, secretId),
        data: toBinary(EventSchema, event),
      }),
    );
    runtime.logger.info("secret version revealed", {
      secretVersion: version,
      principal: principal.name,
      sandboxEngine: reveal.sandboxEngine,
      target: reveal.target,
      destination: reveal.destination,
    });
  }

  return { secretService, versionService, resolveSecretValue };
}

// biome-ignore lint/suspicious/noExplicitAny: requests of every kind, their fields read by name from the kind descriptor
type Req = Record<string, any>;

export function registerSecretServices(
  router: ConnectRouter,
  runtime: Runtime,
  handlers: ReturnType<typeof createSecretHandlers>,
): void {
  const options = { logger: runtime.logger, label: "catalogue" };
  registerGuarded(router, SecretService, handlers.secretService, options);
  registerGuarded(router, SecretVersionService, handlers.versionService, options);
}

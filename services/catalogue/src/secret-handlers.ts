// The SecretService calls: a secret's metadata (names, times, who made it). Reading it is a
// workspace read like any other; deleting it also needs ownership (secret-owner.ts).
import { randomUUID } from "node:crypto";
import { clone, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  checkField,
  listRequestFields,
  paginate,
  secretPattern,
  validateResourceId,
  workspacePattern,
} from "@aiem/kit/aip";
import { Action, Kind } from "@aiem/kit/authz";
import { alreadyExists, notFound, requiredField } from "@aiem/kit/errors";
import { principalOf } from "@aiem/kit/server";
import { SecretSchema, type Secret } from "@aiem/proto/enginemanager/v1/secret_pb.js";
import type {
  CreateSecretRequest,
  DeleteSecretRequest,
  ListSecretsRequest,
  SecretService,
} from "@aiem/proto/enginemanager/v1/secret_service_pb.js";
import { checkSecretOwner } from "./secret-owner.js";
import { SECRET_RESOURCE_TYPE, loadSecret, secretFields } from "./secret-store.js";
import { orEmpty, type ServiceContext } from "./service-context.js";
import { clearOutputOnly, nameTiebreaker, stampCreate, stampUpdate } from "./store.js";
import { Violations, annotationKeyRule, checkDisplayName, checkStringMap } from "./validation.js";

export function createSecretHandlers(context: ServiceContext): ServiceImpl<typeof SecretService> {
  const { policy } = context;
  const db = () => context.database().db;
  return {
    createSecret: (req, ctx) => createSecret(context, req, ctx),
    async getSecret(req, ctx) {
      const { workspace, secret: id } = secretPattern.parse(req.name, "name");
      policy.check(principalOf(ctx), Action.GET, Kind.secrets, workspace);
      const row = await loadSecret(db(), workspace, id);
      if (!row) throw notFound(req.name, SECRET_RESOURCE_TYPE);
      return { secret: fromBinary(SecretSchema, row.resource) };
    },
    listSecrets: (req, ctx) => listSecrets(context, req, ctx),
    deleteSecret: (req, ctx) => deleteSecret(context, req, ctx),
  };
}

async function createSecret(context: ServiceContext, req: CreateSecretRequest, ctx: HandlerContext) {
  const principal = principalOf(ctx);
  const { workspace } = workspacePattern.parse(req.parent, "parent");
  context.policy.check(principal, Action.CREATE, Kind.secrets, workspace);
  const id = req.secretId;
  if (id === "") throw requiredField("secret_id");
  checkField("secret_id", id, validateResourceId);
  const secret = clone(SecretSchema, orEmpty(SecretSchema, req.secret));
  clearOutputOnly(SecretSchema, secret as never);
  const v = new Violations("secret");
  checkDisplayName(v, "display_name", secret.displayName);
  checkStringMap(v, "annotations", secret.annotations, annotationKeyRule);
  v.throwIfAny();
  const now = context.now();
  secret.name = secretPattern.format({ workspace, secret: id });
  secret.uid = randomUUID();
  stampCreate(secret, principal, now);
  // A secret names its last writer from creation on: its versions are its updates.
  stampUpdate(secret, principal, now);
  if (!(await insertSecret(context, workspace, id, secret, now)))
    throw alreadyExists(secret.name, SECRET_RESOURCE_TYPE);
  return { secret };
}

/** Inserts a new secret; false when the workspace already holds one with its id. */
async function insertSecret(
  context: ServiceContext,
  workspace: string,
  id: string,
  secret: Secret,
  now: Date,
): Promise<boolean> {
  return context.write(async (trx) => {
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
}

async function listSecrets(context: ServiceContext, req: ListSecretsRequest, ctx: HandlerContext) {
  const { workspace } = workspacePattern.parse(req.parent, "parent");
  context.policy.check(principalOf(ctx), Action.LIST, Kind.secrets, workspace);
  const query = context.database().db.selectFrom("secrets").select("resource").where("workspace", "=", workspace);
  const page = await paginate(query, {
    ...listRequestFields(req),
    table: secretFields,
    tiebreaker: nameTiebreaker,
    tokens: context.tokens(),
    scope: "secrets",
  });
  return {
    secrets: page.rows.map((r) => fromBinary(SecretSchema, (r as { resource: Uint8Array }).resource)),
    nextPageToken: page.nextPageToken,
  };
}

async function deleteSecret(context: ServiceContext, req: DeleteSecretRequest, ctx: HandlerContext) {
  const { workspace, secret: id } = secretPattern.parse(req.name, "name");
  const principal = principalOf(ctx);
  context.policy.check(principal, Action.DELETE, Kind.secrets, workspace);
  const deleted = await context.write(async (trx) => {
    const secret = await loadSecret(trx, workspace, id, true);
    if (!secret) return false;
    checkSecretOwner(context.policy, principal, fromBinary(SecretSchema, secret.resource), "delete");
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
}

// Revealing a secret version's value: the only way back to a plaintext, for the sandbox service
// acting for an authorised caller. Every reveal is recorded first as a SecretVersionRevealed event
// (the audit trail), so a reveal that cannot be recorded does not happen.
import { randomUUID } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { secretVersionPattern } from "@aiem/kit/aip";
import { Action, Kind } from "@aiem/kit/authz";
import { internalError, notFound } from "@aiem/kit/errors";
import { enqueue, eventSubject } from "@aiem/kit/events";
import type { Principal } from "@aiem/kit/identity";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import {
  SecretVersionRevealedSchema,
  type SecretVersionRevealed_Target,
} from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import { SecretSchema } from "@aiem/proto/enginemanager/v1/secret_pb.js";
import { secretAad } from "./secret-cipher.js";
import { checkSecretOwner } from "./secret-owner.js";
import { SECRET_VERSION_RESOURCE_TYPE, loadSecret, loadVersion, resolveVersion } from "./secret-store.js";
import type { SecretVersionDeps } from "./secret-version-handlers.js";
import type { ServiceContext } from "./service-context.js";
import { EVENT_SOURCE } from "./store.js";

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

export interface ResolvedSecretValue {
  /** The version's full name with its real id (`.../versions/3` when `latest` was asked for). */
  readonly name: string;
  readonly value: Uint8Array;
}

/** The subject of a secret's audit events: `enginemanager.secrets.<workspace>.<id>.revealed`. */
export function secretRevealedSubject(workspace: string, secretId: string): string {
  return eventSubject("secrets", workspace, secretId, "revealed");
}

/**
 * INTERNAL, not part of the public API: the plaintext of a secret version for its owner (the
 * secret's creator, who must hold ACCESS on secretVersions in the secret's own workspace, which
 * viewers do not) or an administrator. `latest` resolves to the newest version. The reveal is
 * recorded (SecretVersionRevealed) before the value is returned. Throws INVALID_ARGUMENT for a
 * malformed name, PERMISSION_DENIED, or NOT_FOUND naming it.
 */
export async function resolveSecretValue(
  { context, cipher }: SecretVersionDeps,
  principal: Principal,
  secretVersionName: string,
  reveal: SecretReveal,
): Promise<ResolvedSecretValue> {
  const {
    workspace,
    secret: secretId,
    version: versionId,
  } = secretVersionPattern.parse(secretVersionName, "secret_version");
  context.policy.check(principal, Action.ACCESS, Kind.secretVersions, workspace);
  const exec = context.database().db;
  const secret = await loadSecret(exec, workspace, secretId);
  if (!secret) throw notFound(secretVersionName, SECRET_VERSION_RESOURCE_TYPE);
  checkSecretOwner(context.policy, principal, fromBinary(SecretSchema, secret.resource), "reveal");
  const number = await resolveVersion(exec, workspace, secretId, versionId);
  const row = number === undefined ? undefined : await loadVersion(exec, workspace, secretId, number);
  if (!row) throw notFound(secretVersionName, SECRET_VERSION_RESOURCE_TYPE);
  const name = secretVersionPattern.format({ workspace, secret: secretId, version: BigInt(row.version).toString() });
  const c = cipher();
  if (row.key_id !== c.keyId) {
    context.logger.error("secret version was encrypted with another key", { name, keyId: row.key_id });
    throw internalError("the secret cannot be decrypted: the server's secrets key changed (AIEM_SECRETS_KEY)");
  }
  let value: Uint8Array;
  try {
    value = c.decrypt(row.nonce, row.ciphertext, secretAad(secret.uid, name));
  } catch {
    context.logger.error("secret version failed authentication", { name });
    throw internalError("the secret cannot be decrypted");
  }
  await recordReveal(context, principal, { workspace, secretId, uid: secret.uid, version: name }, reveal);
  return { name, value };
}

/** The audit record of one reveal, through the outbox: durable before the value is handed out. */
async function recordReveal(
  context: ServiceContext,
  principal: Principal,
  revealed: { workspace: string; secretId: string; uid: string; version: string },
  reveal: SecretReveal,
): Promise<void> {
  const eventId = randomUUID();
  const event = create(EventSchema, {
    id: eventId,
    time: timestampFromDate(context.now()),
    source: EVENT_SOURCE,
    payload: {
      case: "secretVersionRevealed",
      value: create(SecretVersionRevealedSchema, {
        secretVersion: revealed.version,
        secretUid: revealed.uid,
        principal: principal.name,
        sandboxEngine: reveal.sandboxEngine,
        target: reveal.target,
        destination: reveal.destination,
        process: reveal.process ?? "",
      }),
    },
  });
  await context.writeStatement((exec) =>
    enqueue(exec, {
      id: eventId,
      subject: secretRevealedSubject(revealed.workspace, revealed.secretId),
      data: toBinary(EventSchema, event),
    }),
  );
  context.logger.info("secret version revealed", {
    secretVersion: revealed.version,
    principal: principal.name,
    sandboxEngine: reveal.sandboxEngine,
    target: reveal.target,
    destination: reveal.destination,
  });
}

// Delete, pause, resume, terminate, resize storage, upgrade the version, migrate the creator,
// download logs and access: each a change of the locked row through EngineCalls.change. Requests
// are read by the fields every kind's request of the call has; the kinds' handler maps
// (dai-engine-handlers.ts and its siblings) pass their generated requests.
import type { HandlerContext } from "@connectrpc/connect";
import { daiEngineVersionPattern } from "@aiem/kit/aip";
import { Action } from "@aiem/kit/authz";
import { failedPrecondition, invalidArgument, quote, requiredField } from "@aiem/kit/errors";
import { principalOf } from "@aiem/kit/server";
import type { DAIEngine } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import type { DAIEngineProfile } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import type { DAIEngineVersion } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import type { NotebookEngineProfile } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_pb.js";
import { canSee, checkManage } from "./access.js";
import { checkTransition, S } from "./kinds.js";
import { compareVersions, idOf } from "./semver.js";
import { encodeResource, loadByName, type EngineRow, type Executor } from "./store.js";
import type { EngineCalls } from "./engine-calls.js";
import type { AnyEngine } from "./kinds.js";

/** Largest log download (the tail of the log). */
export const MAX_LOG_BYTES = 16 * 1024 * 1024;

/** A request naming one engine. */
export interface EngineNameRequest {
  readonly name: string;
}

/** A request that may be checked without being carried out. */
export interface ValidatingRequest extends EngineNameRequest {
  readonly validateOnly?: boolean;
}

/** The engine as it is now; undefined when an allowed-missing engine does not exist. */
export async function deleteEngine(
  calls: EngineCalls,
  req: ValidatingRequest & { readonly allowMissing?: boolean },
  ctx: HandlerContext,
): Promise<AnyEngine | undefined> {
  const { kind, policy } = calls;
  const principal = principalOf(ctx);
  const target = calls.parseName(req.name);
  policy.check(principal, Action.DELETE, kind.type, target.workspace);
  if (req.allowMissing === true) {
    const existing = await loadByName(calls.db(), target.name);
    if (!existing || !canSee(policy, principal, existing)) return undefined;
  }
  const row = await calls.change(req.name, ctx, {
    action: "delete",
    permission: Action.DELETE,
    validateOnly: req.validateOnly === true,
    intent: true,
    apply: (_row, now) => ({ desired: "DELETED", state: S.DELETING, delete_time: now, launched_at: null }),
  });
  return calls.present(row);
}

export async function pauseEngine(calls: EngineCalls, req: ValidatingRequest, ctx: HandlerContext): Promise<AnyEngine> {
  const row = await calls.change(req.name, ctx, {
    action: "pause",
    permission: Action.PAUSE,
    validateOnly: req.validateOnly === true,
    intent: true,
    already: (row) => row.state === S.PAUSING || row.state === S.PAUSED,
    apply: () => ({ desired: "PAUSED", state: S.PAUSING }),
  });
  return calls.present(row);
}

export async function resumeEngine(
  calls: EngineCalls,
  req: ValidatingRequest,
  ctx: HandlerContext,
): Promise<AnyEngine> {
  const row = await calls.change(req.name, ctx, {
    action: "resume",
    permission: Action.RESUME,
    validateOnly: req.validateOnly === true,
    intent: true,
    already: (row) => row.state === S.STARTING || row.state === S.CONNECTING || row.state === S.RUNNING,
    check: async (row, trx) => {
      const profile = calls.currentProfile(row);
      if (profile) await calls.checkQuotas(trx, row.creator, profile, undefined, { willRun: true, except: row.uid });
    },
    apply: (_row, now) => ({
      desired: "RUNNING",
      state: S.STARTING,
      start_time: now,
      launched_at: null,
      failure_message: "",
      failure_reason: "",
    }),
  });
  return calls.present(row);
}

export async function terminateEngine(
  calls: EngineCalls,
  req: EngineNameRequest,
  ctx: HandlerContext,
): Promise<AnyEngine> {
  const row = await calls.change(req.name, ctx, {
    action: "terminate",
    permission: Action.TERMINATE,
    intent: true,
    apply: () => ({ desired: "TERMINATED", state: S.TERMINATING }),
  });
  return calls.present(row);
}

export async function resizeEngineStorage(
  calls: EngineCalls,
  req: EngineNameRequest & { readonly newStorageBytes: bigint },
  ctx: HandlerContext,
): Promise<AnyEngine> {
  const requested = req.newStorageBytes;
  const row = await calls.change(req.name, ctx, {
    action: "resizeStorage",
    permission: Action.RESIZE_STORAGE,
    intent: true,
    activity: true,
    check: (row, trx) => checkStorageResize(calls, row, trx, requested),
    apply: () => ({ storage_bytes: requested, storage_resizing: true }),
  });
  return calls.present(row);
}

async function checkStorageResize(calls: EngineCalls, row: EngineRow, trx: Executor, requested: bigint): Promise<void> {
  if (row.storage_resizing) {
    throw failedPrecondition(`cannot resize the storage of ${quote(row.name)}: a resize is already running`, {
      type: "STATE",
      subject: row.name,
      description: "storage_resizing is true",
    });
  }
  if (requested <= row.storage_bytes) {
    throw invalidArgument(
      "new_storage_bytes",
      `must be larger than the engine's storage_bytes (${row.storage_bytes}): storage only grows; got ${requested}`,
    );
  }
  const profile = calls.currentProfile(row) as DAIEngineProfile | NotebookEngineProfile | undefined;
  const constraint = profile?.storageBytesConstraint;
  if (constraint && (requested < constraint.min || (constraint.max !== undefined && requested > constraint.max))) {
    const range =
      constraint.max !== undefined ? `between ${constraint.min} and ${constraint.max}` : `at least ${constraint.min}`;
    throw invalidArgument(
      "new_storage_bytes",
      `must be ${range} (the profile's storage_bytes_constraint), got ${requested}`,
    );
  }
  if (profile) {
    await calls.checkQuotas(
      trx,
      row.creator,
      profile,
      { ...calls.resourcesOf(row), storageBytes: requested },
      { willRun: false, except: row.uid, only: ["storage_bytes"] },
    );
  }
}

// How the real service words an upgrade to a version it does not hold.
const missingUpgrade = (name: string) => `DAIEngineVersion "${name}" not found`;

export async function upgradeEngineVersion(
  calls: EngineCalls,
  req: EngineNameRequest & { readonly newDaiEngineVersion: string },
  ctx: HandlerContext,
): Promise<AnyEngine> {
  const target = req.newDaiEngineVersion;
  const field = "new_dai_engine_version";
  if (target !== "") await calls.catchUpFor(() => calls.usableVersion(target, field, missingUpgrade));
  const row = await calls.change(req.name, ctx, {
    action: "upgradeVersion",
    permission: Action.UPGRADE_DAI_ENGINE_VERSION,
    activity: true,
    check: (row) => {
      if (target === "") throw requiredField(field);
      daiEngineVersionPattern.parse(target, field);
      const version = calls.usableVersion(target, field, missingUpgrade) as DAIEngineVersion;
      if (compareVersions(idOf(version.name), row.version) <= 0) {
        throw invalidArgument(
          field,
          `${quote(version.name)} is not newer than the engine's version ${quote(row.version_name)}`,
        );
      }
      return version;
    },
    apply: (row, _now, version) => {
      const resource = calls.decodeStored(row) as DAIEngine;
      resource.daiEngineVersionInfo = version;
      return {
        version: idOf(version.name),
        version_name: version.name,
        resource: encodeResource(calls.kind, resource),
      };
    },
  });
  return calls.present(row);
}

export async function migrateEngineCreator(
  calls: EngineCalls,
  req: EngineNameRequest & { readonly newCreator: string },
  ctx: HandlerContext,
): Promise<AnyEngine> {
  const newCreator = req.newCreator;
  const row = await calls.change(req.name, ctx, {
    action: "migrateCreator",
    permission: Action.MIGRATE_CREATOR,
    activity: true,
    check: () => {
      if (newCreator === "") throw requiredField("new_creator");
      if (!/^users\/[^/\s]{1,256}$/.test(newCreator))
        throw invalidArgument("new_creator", `${quote(newCreator)} is not a user such as users/alice`);
    },
    apply: () => ({ creator: newCreator, creator_display_name: newCreator.slice("users/".length) }),
  });
  return calls.present(row);
}

/** The tail of the engine's log, at most MAX_LOG_BYTES. */
export async function downloadEngineLogs(
  calls: EngineCalls,
  req: EngineNameRequest,
  ctx: HandlerContext,
): Promise<{ contentType: string; data: Uint8Array }> {
  const { context, kind, policy } = calls;
  const principal = principalOf(ctx);
  const target = calls.parseName(req.name);
  policy.check(principal, Action.DOWNLOAD_LOGS, kind.type, target.workspace);
  const row = await calls.mustLoad(calls.db(), principal, target);
  checkManage(policy, principal, row);
  checkTransition(kind, "downloadLogs", row.name, row.state);
  await context.requireServedHere(row);
  if (row.state === S.RUNNING) context.activity.touch(row.uid);
  return { contentType: "text/plain; charset=utf-8", data: await context.runtime().logs(row.uid, MAX_LOG_BYTES) };
}

/** The URL that opens the engine in a browser. */
export async function accessEngine(calls: EngineCalls, req: EngineNameRequest, ctx: HandlerContext): Promise<string> {
  const { context, kind, policy } = calls;
  const principal = principalOf(ctx);
  const target = calls.parseName(req.name);
  policy.check(principal, Action.ACCESS, kind.type, target.workspace);
  const row = await calls.mustLoad(calls.db(), principal, target);
  checkTransition(kind, "access", row.name, row.state);
  context.activity.touch(row.uid);
  return context.openUrl(row.uid, ctx.requestHeader.get("authorization"));
}

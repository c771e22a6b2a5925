// Delete, pause, resume, terminate, resize storage, upgrade the version, migrate the creator,
// download logs and access: each a change of the locked row through EngineCalls.change.
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
import { encodeResource, loadByName } from "./store.js";
import type { EngineCalls, Req } from "./engine-calls.js";

/** Largest log download (the tail of the log). */
export const MAX_LOG_BYTES = 16 * 1024 * 1024;

/** The calls that change an existing engine's state, and its logs and access URL. */
export function createEngineActions(calls: EngineCalls) {
  const {
    ctx,
    kind,
    policy,
    db,
    parseName,
    mustLoad,
    usableVersion,
    catchUpFor,
    currentProfile,
    decodeStored,
    checkQuotas,
    change,
    respond,
    resourcesOf,
  } = calls;

  async function delete_(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, Action.DELETE, kind.type, t.workspace);
    if (req.allowMissing === true) {
      const existing = await loadByName(db(), t.name);
      if (!existing || !canSee(policy, principal, existing)) return {};
    }
    const row = await change(req, hctx, {
      action: "delete",
      permission: Action.DELETE,
      validateOnly: req.validateOnly === true,
      intent: true,
      apply: (_row, now) => ({ desired: "DELETED", state: S.DELETING, delete_time: now, launched_at: null }),
    });
    return respond(row);
  }

  async function pause(req: Req, hctx: HandlerContext) {
    return respond(
      await change(req, hctx, {
        action: "pause",
        permission: Action.PAUSE,
        validateOnly: req.validateOnly === true,
        intent: true,
        already: (row) => row.state === S.PAUSING || row.state === S.PAUSED,
        apply: () => ({ desired: "PAUSED", state: S.PAUSING }),
      }),
    );
  }

  async function resume(req: Req, hctx: HandlerContext) {
    return respond(
      await change(req, hctx, {
        action: "resume",
        permission: Action.RESUME,
        validateOnly: req.validateOnly === true,
        intent: true,
        already: (row) => row.state === S.STARTING || row.state === S.CONNECTING || row.state === S.RUNNING,
        check: async (row, trx) => {
          const profile = currentProfile(row);
          if (profile) await checkQuotas(trx, row.creator, profile, undefined, { willRun: true, except: row.uid });
        },
        apply: (_row, now) => ({
          desired: "RUNNING",
          state: S.STARTING,
          start_time: now,
          launched_at: null,
          failure_message: "",
          failure_reason: "",
        }),
      }),
    );
  }

  async function terminate(req: Req, hctx: HandlerContext) {
    return respond(
      await change(req, hctx, {
        action: "terminate",
        permission: Action.TERMINATE,
        intent: true,
        apply: () => ({ desired: "TERMINATED", state: S.TERMINATING }),
      }),
    );
  }

  async function resizeStorage(req: Req, hctx: HandlerContext) {
    const requested =
      typeof req.newStorageBytes === "bigint" ? (req.newStorageBytes as bigint) : BigInt(req.newStorageBytes ?? 0);
    return respond(
      await change(req, hctx, {
        action: "resizeStorage",
        permission: Action.RESIZE_STORAGE,
        intent: true,
        activity: true,
        check: async (row, trx) => {
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
          const profile = currentProfile(row) as DAIEngineProfile | NotebookEngineProfile | undefined;
          const c = profile?.storageBytesConstraint;
          if (c && (requested < c.min || (c.max !== undefined && requested > c.max))) {
            const range = c.max !== undefined ? `between ${c.min} and ${c.max}` : `at least ${c.min}`;
            throw invalidArgument(
              "new_storage_bytes",
              `must be ${range} (the profile's storage_bytes_constraint), got ${requested}`,
            );
          }
          if (profile) {
            await checkQuotas(
              trx,
              row.creator,
              profile,
              { ...resourcesOf(row), storageBytes: requested },
              {
                willRun: false,
                except: row.uid,
                only: ["storage_bytes"],
              },
            );
          }
        },
        apply: () => ({ storage_bytes: requested, storage_resizing: true }),
      }),
    );
  }

  // How the real service words an upgrade to a version it does not hold.
  const missingUpgrade = (name: string) => `DAIEngineVersion "${name}" not found`;

  async function upgradeVersion(req: Req, hctx: HandlerContext) {
    const target: string = req.newDaiEngineVersion ?? "";
    if (target !== "") await catchUpFor(() => usableVersion(target, "new_dai_engine_version", missingUpgrade));
    return respond(
      await change(req, hctx, {
        action: "upgradeVersion",
        permission: Action.UPGRADE_DAI_ENGINE_VERSION,
        activity: true,
        check: (row) => {
          if (target === "") throw requiredField("new_dai_engine_version");
          daiEngineVersionPattern.parse(target, "new_dai_engine_version");
          const v = usableVersion(target, "new_dai_engine_version", missingUpgrade) as DAIEngineVersion;
          if (compareVersions(idOf(v.name), row.version) <= 0) {
            throw invalidArgument(
              "new_dai_engine_version",
              `${quote(v.name)} is not newer than the engine's version ${quote(row.version_name)}`,
            );
          }
          return v;
        },
        apply: (row, _now, v) => {
          const resource = decodeStored(row) as DAIEngine;
          resource.daiEngineVersionInfo = v;
          return { version: idOf(v.name), version_name: v.name, resource: encodeResource(kind, resource) };
        },
      }),
    );
  }

  async function migrateCreator(req: Req, hctx: HandlerContext) {
    const newCreator: string = req.newCreator ?? "";
    return respond(
      await change(req, hctx, {
        action: "migrateCreator",
        permission: Action.MIGRATE_CREATOR,
        activity: true,
        check: () => {
          if (newCreator === "") throw requiredField("new_creator");
          if (!/^users\/[^/\s]{1,256}$/.test(newCreator))
            throw invalidArgument("new_creator", `${quote(newCreator)} is not a user such as users/alice`);
        },
        apply: () => ({ creator: newCreator, creator_display_name: newCreator.slice("users/".length) }),
      }),
    );
  }

  async function downloadLogs(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, Action.DOWNLOAD_LOGS, kind.type, t.workspace);
    const row = await mustLoad(db(), principal, t);
    checkManage(policy, principal, row);
    checkTransition(kind, "downloadLogs", row.name, row.state);
    await ctx.requireServedHere(row);
    if (row.state === S.RUNNING) ctx.activity.touch(row.uid);
    return {
      logs: { contentType: "text/plain; charset=utf-8", data: await ctx.runtime().logs(row.uid, MAX_LOG_BYTES) },
    };
  }

  async function access(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    const t = parseName(req.name);
    policy.check(principal, Action.ACCESS, kind.type, t.workspace);
    const row = await mustLoad(db(), principal, t);
    checkTransition(kind, "access", row.name, row.state);
    ctx.activity.touch(row.uid);
    return { uri: ctx.openUrl(row.uid, hctx.requestHeader.get("authorization")) };
  }

  return { delete_, pause, resume, terminate, resizeStorage, upgradeVersion, migrateCreator, downloadLogs, access };
}

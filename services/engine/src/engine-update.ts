// Updating an engine: which mask paths may change and why not the others, the new values checked
// against the (possibly new) profile, and the quotas the change touches.
import type { HandlerContext } from "@connectrpc/connect";
import { checkUpdateMask } from "@aiem/kit/aip";
import { Action } from "@aiem/kit/authz";
import { invalidArgument, quote, requiredField } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import type { DAIEngine } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import type { DAIEngineProfile } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import type { StoredEngine, VersionLike } from "./engine-catalogue-refs.js";
import type { EngineCalls } from "./engine-calls.js";
import { createEngine } from "./engine-create.js";
import type { AnyEngine, EngineKind } from "./kinds.js";
import { idOf } from "./semver.js";
import { durationFromMs, encodeResource, loadByName, type EngineRow } from "./store.js";
import {
  checkAnnotations,
  checkDisplayName,
  checkEngineConfig,
  cumulativeTerms,
  resolveResources,
  Violations,
  type AnyProfile,
  type RequestedResources,
  type Resources,
} from "./validation.js";

/** An update, read by the fields every kind's update request has; `engine` is the kind's resource. */
export interface UpdateRequest {
  readonly engine: AnyEngine | undefined;
  readonly updateMask?: { readonly paths: readonly string[] } | undefined;
  readonly allowMissing?: boolean;
  readonly validateOnly?: boolean;
}

/** What an update writes, and what its quota check needs. */
interface UpdatePlan {
  readonly patch: Partial<EngineRow>;
  readonly profile: AnyProfile;
  readonly resources: Resources;
  readonly quotaFields: string[];
}

/**
 * How the real service words an update to a notebook image it does not hold: its engine service
 * wraps the image service's answer, and clients compare the whole text.
 */
function missingImageOnUpdate(name: string): string {
  return `validation error: invalid notebook_image: rpc error: code = InvalidArgument desc = notebookImage ${name} not found`;
}

const SET_ELSEWHERE: Record<string, string> = {
  storage_bytes: "grows through :resizeStorage",
  dai_engine_version: "changes through :upgradeDAIEngineVersion",
  h2o_engine_version: "cannot be changed after create",
  shared: "is set on create only",
  name: "identifies the engine and cannot be changed",
  node_count: "cannot be changed after create",
};

function checkMask(kind: EngineKind, paths: readonly string[] | undefined): string[] {
  for (const path of paths ?? []) {
    const reason = Object.hasOwn(SET_ELSEWHERE, path) ? SET_ELSEWHERE[path] : undefined;
    if (reason && !kind.updatable.includes(path) && kind.schema.fields.some((fd) => fd.name === path)) {
      throw invalidArgument("update_mask", `${quote(path)} ${reason}`);
    }
    const field = kind.schema.fields.find((fd) => fd.name === path);
    if (field && !kind.updatable.includes(path))
      throw invalidArgument("update_mask", `${quote(path)} is set by the server and cannot be updated`);
  }
  return checkUpdateMask(paths, { allowed: kind.updatable });
}

/** Update with a field mask (and allow_missing, which creates the engine). */
export async function updateEngine(calls: EngineCalls, req: UpdateRequest, ctx: HandlerContext): Promise<AnyEngine> {
  const { kind, policy } = calls;
  const principal = principalOf(ctx);
  const incoming = req.engine as StoredEngine | undefined;
  if (!incoming) throw requiredField(kind.resourceField);
  const target = calls.parseName(incoming.name ?? "", calls.f("name"));
  policy.check(principal, Action.UPDATE, kind.type, target.workspace);
  const paths = checkMask(kind, req.updateMask?.paths);
  const validateOnly = req.validateOnly === true;

  if (req.allowMissing === true) {
    const existing = await loadByName(calls.db(), target.name);
    if (!existing) {
      policy.check(principal, Action.CREATE, kind.type, target.workspace);
      return createEngine(calls, principal, target, incoming, validateOnly);
    }
  }

  if (paths.includes("profile") && (incoming.profile ?? "") !== "")
    await calls.catchUpFor(() => calls.usableProfile(principal, incoming.profile));
  const row = await calls.change(target.name, ctx, {
    action: "update",
    permission: Action.UPDATE,
    validateOnly,
    activity: true,
    check: async (row, trx) => {
      const plan = planUpdate(calls, row, incoming, paths, principal);
      if (plan.quotaFields.length > 0) {
        await calls.checkQuotas(trx, row.creator, plan.profile, plan.resources, {
          willRun: false,
          except: row.uid,
          only: plan.quotaFields,
        });
      }
      return plan;
    },
    apply: (_row, _now, plan) => plan.patch,
  });
  return calls.present(row);
}

function planUpdate(
  calls: EngineCalls,
  row: EngineRow,
  incoming: StoredEngine,
  paths: readonly string[],
  principal: Principal,
): UpdatePlan {
  const { kind } = calls;
  const has = (p: string) => paths.includes(p);
  const stored = calls.decodeStored(row);
  const v = new Violations(kind.resourceField);
  if (has("profile") && (incoming.profile ?? "") === "" && row.profile !== "")
    throw invalidArgument(`${kind.resourceField}.profile`, "profile cannot be unset");
  const profileChanges = has("profile") && (incoming.profile ?? "") !== row.profile;
  // An unchanged image is no change, even when it has left the catalogue since.
  const imageChanges =
    kind.type === "notebookEngines" && has("notebook_image") && (incoming.notebookImage ?? "") !== row.version_name;
  const image = imageChanges
    ? calls.usableVersion(incoming.notebookImage ?? "", calls.f("notebook_image"), missingImageOnUpdate)
    : undefined;
  const profile = profileChanges
    ? calls.usableProfile(principal, incoming.profile ?? "")
    : (calls.currentProfile(row) ?? (stored.profileInfo as AnyProfile));
  if (has("display_name")) checkDisplayName(v, incoming.displayName ?? "");
  if (has("annotations")) checkAnnotations(v, incoming.annotations ?? {});
  const pick = <T>(path: string, fromIncoming: T, current: T) => (has(path) ? fromIncoming : current);
  const requested: RequestedResources = {
    cpu: pick("cpu", incoming.cpu, row.cpu),
    gpu: pick("gpu", incoming.gpu, row.gpu),
    memoryBytes: pick("memory_bytes", incoming.memoryBytes, row.memory_bytes),
    storageBytes: kind.hasStorage ? row.storage_bytes : undefined,
    nodeCount: kind.hasNodeCount ? (row.node_count ?? undefined) : undefined,
    maxIdleDuration: pick("max_idle_duration", incoming.maxIdleDuration, durationFromMs(row.max_idle_ms)),
    maxRunningDuration: pick("max_running_duration", incoming.maxRunningDuration, durationFromMs(row.max_running_ms)),
  };
  const resources = resolveResources(kind, profile, requested, v, (field) => profileChanges || has(field));
  let config: Record<string, string> | undefined;
  if (kind.type === "daiEngines" && (has("config") || profileChanges)) {
    config = checkEngineConfig(
      v,
      profile as DAIEngineProfile,
      has("config") ? (incoming.config ?? {}) : (stored as DAIEngine).config,
    );
  }
  v.throwIfAny();
  const changes = { profileChanges, profile, image, config };
  return { profile, resources, ...updatedResource(kind, stored, incoming, has, principal, changes, resources) };
}

/** The stored resource and row patch once the update's checked values are in. */
function updatedResource(
  kind: EngineKind,
  stored: StoredEngine,
  incoming: StoredEngine,
  has: (path: string) => boolean,
  principal: Principal,
  changes: {
    profileChanges: boolean;
    profile: AnyProfile;
    image: VersionLike | undefined;
    config: Record<string, string> | undefined;
  },
  resources: Resources,
): { patch: Partial<EngineRow>; quotaFields: string[] } {
  const { profileChanges, profile, image, config } = changes;
  if (has("display_name")) stored.displayName = incoming.displayName ?? "";
  if (has("annotations")) stored.annotations = { ...incoming.annotations };
  if (config) stored.config = config;
  if (image) stored.notebookImageInfo = image;
  if (profileChanges) {
    stored.profileInfo = profile;
    if (kind.type === "daiEngines")
      (stored as DAIEngine).dataDirectoryStorageClass = (profile as DAIEngineProfile).dataDirectoryStorageClass;
  }
  if (kind.type === "notebookEngines") {
    stored.updater = principal.name;
    stored.updaterDisplayName = principal.displayName;
  }
  const quotaFields = profileChanges
    ? cumulativeTerms(kind, profile).map((term) => term.field)
    : ["cpu", "gpu", "memory_bytes"].filter(has);
  return {
    quotaFields,
    patch: {
      display_name: stored.displayName,
      profile: profile.name,
      cpu: resources.cpu,
      gpu: resources.gpu,
      memory_bytes: resources.memoryBytes,
      max_idle_ms: resources.maxIdleMs,
      max_running_ms: resources.maxRunningMs,
      ...(image ? { version: idOf(image.name), version_name: image.name } : {}),
      resource: encodeResource(kind, stored),
    },
  };
}

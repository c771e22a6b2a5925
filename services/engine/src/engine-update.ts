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
import type { AnyEngine } from "./kinds.js";
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
import type { EngineCalls, Req, Target } from "./engine-calls.js";

/**
 * How the real service words an update to a notebook image it does not hold: its engine service
 * wraps the image service's answer, and clients compare the whole text.
 */
function missingImageOnUpdate(name: string): string {
  return `validation error: invalid notebook_image: rpc error: code = InvalidArgument desc = notebookImage ${name} not found`;
}

/** Update with a field mask (and allow_missing, which creates through `createEngine`). */
export function createEngineUpdate(
  calls: EngineCalls,
  createEngine: (principal: Principal, t: Target, input: AnyEngine, validateOnly: boolean) => Promise<AnyEngine>,
) {
  const {
    kind,
    policy,
    db,
    f,
    parseName,
    usableProfile,
    usableVersion,
    catchUpFor,
    currentProfile,
    decodeStored,
    checkQuotas,
    change,
    respond,
  } = calls;

  const SET_ELSEWHERE: Record<string, string> = {
    storage_bytes: "grows through :resizeStorage",
    dai_engine_version: "changes through :upgradeDAIEngineVersion",
    h2o_engine_version: "cannot be changed after create",
    shared: "is set on create only",
    name: "identifies the engine and cannot be changed",
    node_count: "cannot be changed after create",
  };

  function checkMask(paths: readonly string[] | undefined): string[] {
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

  async function update(req: Req, hctx: HandlerContext) {
    const principal = principalOf(hctx);
    // biome-ignore lint/suspicious/noExplicitAny: an engine of any kind, its fields read by name from the kind descriptor
    const incoming = req[kind.resourceLocal] as (AnyEngine & Record<string, any>) | undefined;
    if (!incoming) throw requiredField(kind.resourceField);
    const t = parseName(incoming.name ?? "", f("name"));
    policy.check(principal, Action.UPDATE, kind.type, t.workspace);
    const paths = checkMask(req.updateMask?.paths);
    const validateOnly = req.validateOnly === true;

    if (req.allowMissing === true) {
      const existing = await loadByName(db(), t.name);
      if (!existing) {
        policy.check(principal, Action.CREATE, kind.type, t.workspace);
        return { [kind.resourceLocal]: await createEngine(principal, t, incoming, validateOnly) };
      }
    }

    if (paths.includes("profile") && (incoming.profile ?? "") !== "")
      await catchUpFor(() => usableProfile(principal, incoming.profile));
    const row = await change({ name: t.name }, hctx, {
      action: "update",
      permission: Action.UPDATE,
      validateOnly,
      activity: true,
      check: async (row, trx) => {
        const plan = planUpdate(row, incoming, paths, principal);
        if (plan.quotaFields.length > 0) {
          await checkQuotas(trx, row.creator, plan.profile, plan.resources, {
            willRun: false,
            except: row.uid,
            only: plan.quotaFields,
          });
        }
        return plan;
      },
      apply: (_row, _now, plan) => plan.patch,
    });
    return respond(row);
  }

  function planUpdate(
    row: EngineRow,
    // biome-ignore lint/suspicious/noExplicitAny: an engine of any kind, its fields read by name from the kind descriptor
    incoming: AnyEngine & Record<string, any>,
    paths: readonly string[],
    principal: Principal,
  ): { patch: Partial<EngineRow>; profile: AnyProfile; resources: Resources; quotaFields: string[] } {
    const has = (p: string) => paths.includes(p);
    // biome-ignore lint/suspicious/noExplicitAny: an engine of any kind, its fields read by name from the kind descriptor
    const stored = decodeStored(row) as AnyEngine & Record<string, any>;
    const v = new Violations(kind.resourceField);
    if (has("profile") && (incoming.profile ?? "") === "" && row.profile !== "")
      throw invalidArgument(`${kind.resourceField}.profile`, "profile cannot be unset");
    const profileChanges = has("profile") && (incoming.profile ?? "") !== row.profile;
    // An unchanged image is no change, even when it has left the catalogue since.
    const imageChanges =
      kind.type === "notebookEngines" && has("notebook_image") && (incoming.notebookImage ?? "") !== row.version_name;
    const image = imageChanges
      ? usableVersion(incoming.notebookImage ?? "", f("notebook_image"), missingImageOnUpdate)
      : undefined;
    const profile = profileChanges
      ? usableProfile(principal, incoming.profile ?? "")
      : (currentProfile(row) ?? (stored.profileInfo as AnyProfile));
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
      profile,
      resources,
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

  return { update };
}

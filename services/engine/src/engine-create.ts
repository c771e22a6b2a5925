// Creating DAI, H2O and notebook engines: the new row built from the request, its profile and
// version, and the quota check and insert in one transaction.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { alreadyExists } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import type { DAIEngine } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import type { DAIEngineProfile } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import type { H2OEngine } from "@aiem/proto/enginemanager/v1/h2o_engine_pb.js";
import type { NotebookEngine } from "@aiem/proto/enginemanager/v1/notebook_engine_pb.js";
import type { NotebookEngineProfile } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_pb.js";
import { S, type AnyEngine } from "./kinds.js";
import { idOf } from "./semver.js";
import { encodeResource, enqueueStateChanged, insertEngine, loadByName, present, type EngineRow } from "./store.js";
import {
  checkAnnotations,
  checkDisplayName,
  checkEngineConfig,
  resolveResources,
  Violations,
  type AnyProfile,
  type RequestedResources,
} from "./validation.js";
import type { EngineCalls, Target } from "./engine-calls.js";

/** Creating an engine: checks a request against its profile and version and writes the new engine. */
export function createEngineCreation(calls: EngineCalls) {
  const { ctx, kind, db, f, usableProfile, usableVersion, withCatalogue, checkQuotas, resourcesOf } = calls;

  /** Builds the engine a create would make (checked, not stored). */
  function buildNew(principal: Principal, t: Target, input: AnyEngine): { row: EngineRow; profile: AnyProfile } {
    const v = new Violations(kind.resourceField);
    // biome-ignore lint/suspicious/noExplicitAny: an engine of any kind, its fields read by name from the kind descriptor
    const i = input as AnyEngine & Record<string, any>;
    checkDisplayName(v, i.displayName ?? "");
    if (kind.type !== "notebookEngines") checkAnnotations(v, (i as DAIEngine | H2OEngine).annotations ?? {});
    if ((i.profile ?? "") === "") v.add("profile", "is required");
    if ((i[kind.versionLocal] ?? "") === "") v.add(kind.versionField, "is required");
    v.throwIfAny();
    const profile = usableProfile(principal, i.profile);
    const version = usableVersion(i[kind.versionLocal], f(kind.versionField));
    const requested: RequestedResources = {
      cpu: i.cpu,
      gpu: i.gpu,
      memoryBytes: i.memoryBytes,
      storageBytes: kind.hasStorage ? i.storageBytes : undefined,
      nodeCount: kind.hasNodeCount ? i.nodeCount : undefined,
      maxIdleDuration: i.maxIdleDuration,
      maxRunningDuration: i.maxRunningDuration,
    };
    const resources = resolveResources(kind, profile, requested, v);
    let config: Record<string, string> = {};
    if (kind.type === "daiEngines")
      config = checkEngineConfig(v, profile as DAIEngineProfile, (i as DAIEngine).config ?? {});
    v.throwIfAny();

    const now = ctx.now();
    // biome-ignore lint/suspicious/noExplicitAny: an engine of any kind, its fields read by name from the kind descriptor
    const resource = create(kind.schema) as AnyEngine & Record<string, any>;
    resource.displayName = i.displayName ?? "";
    resource.profileInfo = profile;
    resource[kind.versionInfoLocal] = version;
    switch (kind.type) {
      case "daiEngines": {
        const d = resource as DAIEngine;
        d.annotations = { ...(i as DAIEngine).annotations };
        d.config = config;
        d.dataDirectoryStorageClass = (profile as DAIEngineProfile).dataDirectoryStorageClass;
        break;
      }
      case "h2oEngines":
        (resource as H2OEngine).annotations = { ...(i as H2OEngine).annotations };
        break;
      case "notebookEngines": {
        const n = resource as NotebookEngine;
        n.storageClassName = (profile as NotebookEngineProfile).storageClassName;
        n.updater = principal.name;
        n.updaterDisplayName = principal.displayName;
        break;
      }
    }
    const row: EngineRow = {
      uid: randomUUID(),
      type: kind.type,
      workspace: t.workspace,
      engine_id: t.id,
      name: t.name,
      display_name: resource.displayName,
      creator: principal.name,
      creator_display_name: principal.displayName,
      profile: profile.name,
      version: idOf(version.name),
      version_name: version.name,
      state: S.STARTING,
      desired: "RUNNING",
      reconciling: true,
      shared: kind.type === "notebookEngines" ? (i as NotebookEngine).shared === true : false,
      cpu: resources.cpu,
      gpu: resources.gpu,
      memory_bytes: resources.memoryBytes,
      storage_bytes: resources.storageBytes,
      node_count: resources.nodeCount,
      max_idle_ms: resources.maxIdleMs,
      max_running_ms: resources.maxRunningMs,
      create_time: now,
      update_time: now,
      delete_time: null,
      resume_time: null,
      last_activity_time: now,
      start_time: now,
      launched_at: null,
      failure_reason: "",
      failure_message: "",
      storage_resizing: false,
      total_disk_bytes: null,
      free_disk_bytes: null,
      generation: 1n,
      next_reconcile_at: now,
      lease_owner: null,
      lease_until: null,
      placement: null,
      resource: encodeResource(kind, resource),
    };
    return { row, profile };
  }

  async function createEngine(
    principal: Principal,
    t: Target,
    input: AnyEngine,
    validateOnly: boolean,
  ): Promise<AnyEngine> {
    const { row, profile } = await withCatalogue(() => buildNew(principal, t, input));
    if (validateOnly) {
      const exec = db();
      if (await loadByName(exec, t.name)) throw alreadyExists(t.name, kind.resourceType);
      await exec
        .transaction()
        .execute((trx) => checkQuotas(trx, principal.name, profile, resourcesOf(row), { willRun: true }));
      return present(row, ctx.presentContext());
    }
    await ctx.write(async (trx) => {
      await checkQuotas(trx, principal.name, profile, resourcesOf(row), { willRun: true });
      if (!(await insertEngine(trx, row))) throw alreadyExists(t.name, kind.resourceType);
      await enqueueStateChanged(trx, row, undefined, ctx.presentContext());
    });
    return present(row, ctx.presentContext());
  }

  return { buildNew, createEngine };
}

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
import type { StoredEngine, VersionLike } from "./engine-catalogue-refs.js";
import type { EngineCalls, Target } from "./engine-calls.js";
import { S, type AnyEngine, type EngineKind } from "./kinds.js";
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
  type Resources,
} from "./validation.js";

/** What a create asks for, checked against its profile and version. */
interface CheckedCreate {
  readonly profile: AnyProfile;
  readonly version: VersionLike;
  readonly resources: Resources;
  readonly config: Record<string, string>;
}

/** Checks and writes the engine a create asks for; the engine as it would be stored. */
export async function createEngine(
  calls: EngineCalls,
  principal: Principal,
  target: Target,
  input: AnyEngine,
  validateOnly: boolean,
): Promise<AnyEngine> {
  const { context, kind } = calls;
  const { row, profile } = await calls.withCatalogue(() => buildNew(calls, principal, target, input));
  if (validateOnly) {
    const exec = calls.db();
    if (await loadByName(exec, target.name)) throw alreadyExists(target.name, kind.resourceType);
    await exec
      .transaction()
      .execute((trx) => calls.checkQuotas(trx, principal.name, profile, calls.resourcesOf(row), { willRun: true }));
    return present(row, context.presentContext());
  }
  await context.write(async (trx) => {
    await calls.checkQuotas(trx, principal.name, profile, calls.resourcesOf(row), { willRun: true });
    if (!(await insertEngine(trx, row))) throw alreadyExists(target.name, kind.resourceType);
    await enqueueStateChanged(trx, row, undefined, context.presentContext());
  });
  return present(row, context.presentContext());
}

/** Builds the engine a create would make (checked, not stored). */
export function buildNew(
  calls: EngineCalls,
  principal: Principal,
  target: Target,
  input: AnyEngine,
): { row: EngineRow; profile: AnyProfile } {
  const checked = checkCreate(calls, principal, input as StoredEngine);
  const resource = newResource(calls.kind, principal, input as StoredEngine, checked);
  const row = newRow(calls.kind, principal, target, checked, resource, calls.context.now());
  row.shared = calls.kind.type === "notebookEngines" ? (input as NotebookEngine).shared === true : false;
  return { row, profile: checked.profile };
}

function checkCreate(calls: EngineCalls, principal: Principal, input: StoredEngine): CheckedCreate {
  const { kind } = calls;
  const v = new Violations(kind.resourceField);
  checkDisplayName(v, input.displayName ?? "");
  if (kind.type !== "notebookEngines") checkAnnotations(v, (input as DAIEngine | H2OEngine).annotations ?? {});
  if ((input.profile ?? "") === "") v.add("profile", "is required");
  if ((input[kind.versionLocal] ?? "") === "") v.add(kind.versionField, "is required");
  v.throwIfAny();
  const profile = calls.usableProfile(principal, input.profile);
  const version = calls.usableVersion(input[kind.versionLocal], calls.f(kind.versionField));
  const requested: RequestedResources = {
    cpu: input.cpu,
    gpu: input.gpu,
    memoryBytes: input.memoryBytes,
    storageBytes: kind.hasStorage ? input.storageBytes : undefined,
    nodeCount: kind.hasNodeCount ? input.nodeCount : undefined,
    maxIdleDuration: input.maxIdleDuration,
    maxRunningDuration: input.maxRunningDuration,
  };
  const resources = resolveResources(kind, profile, requested, v);
  let config: Record<string, string> = {};
  if (kind.type === "daiEngines")
    config = checkEngineConfig(v, profile as DAIEngineProfile, (input as DAIEngine).config ?? {});
  v.throwIfAny();
  return { profile, version, resources, config };
}

/** The stored resource: what the row's columns do not hold. */
function newResource(kind: EngineKind, principal: Principal, input: StoredEngine, checked: CheckedCreate): AnyEngine {
  const resource = create(kind.schema) as StoredEngine;
  resource.displayName = input.displayName ?? "";
  resource.profileInfo = checked.profile;
  resource[kind.versionInfoLocal] = checked.version;
  switch (kind.type) {
    case "daiEngines": {
      const d = resource as DAIEngine;
      d.annotations = { ...(input as DAIEngine).annotations };
      d.config = checked.config;
      d.dataDirectoryStorageClass = (checked.profile as DAIEngineProfile).dataDirectoryStorageClass;
      break;
    }
    case "h2oEngines":
      (resource as H2OEngine).annotations = { ...(input as H2OEngine).annotations };
      break;
    case "notebookEngines": {
      const n = resource as NotebookEngine;
      n.storageClassName = (checked.profile as NotebookEngineProfile).storageClassName;
      n.updater = principal.name;
      n.updaterDisplayName = principal.displayName;
      break;
    }
  }
  return resource;
}

function newRow(
  kind: EngineKind,
  principal: Principal,
  target: Target,
  { profile, version, resources }: CheckedCreate,
  resource: AnyEngine,
  now: Date,
): EngineRow {
  return {
    uid: randomUUID(),
    type: kind.type,
    workspace: target.workspace,
    engine_id: target.id,
    name: target.name,
    display_name: resource.displayName,
    creator: principal.name,
    creator_display_name: principal.displayName,
    profile: profile.name,
    version: idOf(version.name),
    version_name: version.name,
    state: S.STARTING,
    desired: "RUNNING",
    reconciling: true,
    shared: false,
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
}

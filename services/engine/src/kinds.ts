// One descriptor per engine kind (DAI, H2O, notebook): its protobuf schema and service, names,
// the catalogue kinds it refers to, its states and which calls each state allows (spec section
// 4). The store, handlers, reconciler and lists are written once over these.
import type { DescEnum } from "@bufbuild/protobuf";
import type { GenMessage } from "@bufbuild/protobuf/codegenv2";
import { daiEnginePattern, h2oEnginePattern, notebookEnginePattern, type ResourcePattern } from "@aiem/kit/aip";
import type { CatalogueKind } from "@aiem/kit/authz";
import { failedPrecondition, quote } from "@aiem/kit/errors";
import { DAIEngine_StateSchema, DAIEngineSchema, type DAIEngine } from "@aiem/proto/enginemanager/v1/dai_engine_pb.js";
import { DAIEngineService } from "@aiem/proto/enginemanager/v1/dai_engine_service_pb.js";
import { type Engine_State, Engine_StateSchema, Engine_Type } from "@aiem/proto/enginemanager/v1/engine_pb.js";
import { H2OEngine_StateSchema, H2OEngineSchema, type H2OEngine } from "@aiem/proto/enginemanager/v1/h2o_engine_pb.js";
import { H2OEngineService } from "@aiem/proto/enginemanager/v1/h2o_engine_service_pb.js";
import {
  NotebookEngine_StateSchema,
  NotebookEngineSchema,
  type NotebookEngine,
} from "@aiem/proto/enginemanager/v1/notebook_engine_pb.js";
import { NotebookEngineService } from "@aiem/proto/enginemanager/v1/notebook_engine_service_pb.js";

/** The collection id of a kind: its resource names, permissions and the `type` column. */
export type EngineType = "daiEngines" | "h2oEngines" | "notebookEngines";
export type AnyEngine = DAIEngine | H2OEngine | NotebookEngine;

/** The service of each kind, whose every method its handlers implement. */
export interface EngineServices {
  readonly daiEngines: typeof DAIEngineService;
  readonly h2oEngines: typeof H2OEngineService;
  readonly notebookEngines: typeof NotebookEngineService;
}

/** What a state is called in every kind's enum: `STATE_` and its member's name in the mixed `Engine.State`. */
type StateNames = { readonly [K in Exclude<keyof typeof Engine_State, "UNSPECIFIED">]: `STATE_${K}` };

/**
 * State names, as stored and as filters spell them (the same text in every kind's enum, whose
 * numbers differ: docs/adr/0231), checked against the mixed enum by the compiler.
 */
export const S = {
  STARTING: "STATE_STARTING",
  RUNNING: "STATE_RUNNING",
  PAUSING: "STATE_PAUSING",
  PAUSED: "STATE_PAUSED",
  FAILED: "STATE_FAILED",
  DELETING: "STATE_DELETING",
  CONNECTING: "STATE_CONNECTING",
  TERMINATING: "STATE_TERMINATING",
  TERMINATED: "STATE_TERMINATED",
} as const satisfies StateNames;
export type StateName = (typeof S)[keyof typeof S];

/** What the caller asked for; the reconciler drives the observed state towards it. */
export type Desired = "RUNNING" | "PAUSED" | "TERMINATED" | "DELETED";

/** Calls whose permission depends on the engine's state. */
export type EngineAction =
  | "pause"
  | "resume"
  | "terminate"
  | "update"
  | "delete"
  | "resizeStorage"
  | "upgradeVersion"
  | "migrateCreator"
  | "access"
  | "downloadLogs";

export interface EngineKind<T extends EngineType = EngineType> {
  readonly type: T;
  readonly engineType: Engine_Type;
  /** "Driverless AI engine": how messages name the kind. */
  readonly label: string;
  readonly schema: GenMessage<AnyEngine>;
  readonly service: EngineServices[T];
  readonly stateEnum: DescEnum;
  readonly resourceType: string;
  readonly pattern: ResourcePattern<string>;
  readonly idVar: string;
  /** Create id request field: `dai_engine_id` / `daiEngineId`. */
  readonly idField: string;
  readonly idLocal: string;
  /** The resource's request field: `dai_engine` / `daiEngine`. */
  readonly resourceField: string;
  readonly resourceLocal: string;
  readonly pluralLocal: string;
  /** The singular in method names: `CreateDAIEngine`. */
  readonly singular: string;
  readonly profileKind: CatalogueKind;
  /** The catalogue kind of what the engine runs: its version or, for notebooks, its image. */
  readonly versionKind: "daiEngineVersions" | "h2oEngineVersions" | "notebookEngineImages";
  readonly versionField: string;
  readonly versionLocal: "daiEngineVersion" | "h2oEngineVersion" | "notebookImage";
  readonly versionInfoLocal: "daiEngineVersionInfo" | "h2oEngineVersionInfo" | "notebookImageInfo";
  readonly hasStorage: boolean;
  readonly hasNodeCount: boolean;
  /** What the idle and running limits do: DAI and notebook engines pause, H2O engines terminate. */
  readonly limitAction: "pause" | "terminate";
  /** Update mask paths (spec section 5), in the order `*` expands to; empty when there is no update call. */
  readonly updatable: readonly string[];
  /** The states this kind can be in. */
  readonly states: readonly StateName[];
  /** Which states allow each call; a call missing here does not exist for the kind. */
  readonly allowed: Partial<Record<EngineAction, readonly StateName[]>>;
}

const ALL_BUT = (states: readonly StateName[], ...except: StateName[]) => states.filter((s) => !except.includes(s));

const DAI_STATES: StateName[] = [S.STARTING, S.RUNNING, S.PAUSING, S.PAUSED, S.FAILED, S.DELETING, S.CONNECTING];
const H2O_STATES: StateName[] = [
  S.STARTING,
  S.RUNNING,
  S.PAUSING,
  S.PAUSED,
  S.FAILED,
  S.DELETING,
  S.CONNECTING,
  S.TERMINATING,
  S.TERMINATED,
];
const NOTEBOOK_STATES: StateName[] = [S.STARTING, S.RUNNING, S.PAUSING, S.PAUSED, S.FAILED, S.DELETING, S.TERMINATED];

export const DAI: EngineKind<"daiEngines"> = {
  type: "daiEngines",
  engineType: Engine_Type.DRIVERLESS_AI,
  label: "Driverless AI engine",
  schema: DAIEngineSchema as GenMessage<AnyEngine>,
  service: DAIEngineService,
  stateEnum: DAIEngine_StateSchema,
  resourceType: "enginemanager.ai/DAIEngine",
  pattern: daiEnginePattern,
  idVar: "dai_engine",
  idField: "dai_engine_id",
  idLocal: "daiEngineId",
  resourceField: "dai_engine",
  resourceLocal: "daiEngine",
  pluralLocal: "daiEngines",
  singular: "DAIEngine",
  profileKind: "daiEngineProfiles",
  versionKind: "daiEngineVersions",
  versionField: "dai_engine_version",
  versionLocal: "daiEngineVersion",
  versionInfoLocal: "daiEngineVersionInfo",
  hasStorage: true,
  hasNodeCount: false,
  limitAction: "pause",
  updatable: [
    "profile",
    "cpu",
    "gpu",
    "memory_bytes",
    "config",
    "annotations",
    "display_name",
    "max_idle_duration",
    "max_running_duration",
  ],
  states: DAI_STATES,
  allowed: {
    // Pausing a pausing or paused engine, or resuming one that starts or runs, changes nothing
    // and answers the engine as it is, as the real service does.
    pause: [S.STARTING, S.CONNECTING, S.RUNNING, S.PAUSING, S.PAUSED],
    resume: [S.PAUSED, S.FAILED, S.STARTING, S.CONNECTING, S.RUNNING],
    // Only a stopped engine changes, as the real service requires (the running one keeps its spec).
    update: [S.PAUSED, S.FAILED],
    delete: ALL_BUT(DAI_STATES, S.DELETING),
    resizeStorage: [S.RUNNING, S.PAUSED],
    upgradeVersion: [S.PAUSED, S.FAILED],
    migrateCreator: ALL_BUT(DAI_STATES, S.DELETING),
    downloadLogs: DAI_STATES,
  },
};

export const H2O: EngineKind<"h2oEngines"> = {
  type: "h2oEngines",
  engineType: Engine_Type.H2O,
  label: "H2O engine",
  schema: H2OEngineSchema as GenMessage<AnyEngine>,
  service: H2OEngineService,
  stateEnum: H2OEngine_StateSchema,
  resourceType: "enginemanager.ai/H2OEngine",
  pattern: h2oEnginePattern,
  idVar: "h2o_engine",
  idField: "h2o_engine_id",
  idLocal: "h2oEngineId",
  resourceField: "h2o_engine",
  resourceLocal: "h2oEngine",
  pluralLocal: "h2oEngines",
  singular: "H2OEngine",
  profileKind: "h2oEngineProfiles",
  versionKind: "h2oEngineVersions",
  versionField: "h2o_engine_version",
  versionLocal: "h2oEngineVersion",
  versionInfoLocal: "h2oEngineVersionInfo",
  hasStorage: false,
  hasNodeCount: true,
  limitAction: "terminate",
  updatable: [],
  states: H2O_STATES,
  allowed: {
    terminate: ALL_BUT(H2O_STATES, S.TERMINATING, S.TERMINATED, S.DELETING),
    delete: ALL_BUT(H2O_STATES, S.DELETING),
    downloadLogs: H2O_STATES,
  },
};

export const NOTEBOOK: EngineKind<"notebookEngines"> = {
  type: "notebookEngines",
  engineType: Engine_Type.NOTEBOOK,
  label: "notebook engine",
  schema: NotebookEngineSchema as GenMessage<AnyEngine>,
  service: NotebookEngineService,
  stateEnum: NotebookEngine_StateSchema,
  resourceType: "enginemanager.ai/NotebookEngine",
  pattern: notebookEnginePattern,
  idVar: "notebook_engine",
  idField: "notebook_engine_id",
  idLocal: "notebookEngineId",
  resourceField: "notebook_engine",
  resourceLocal: "notebookEngine",
  pluralLocal: "notebookEngines",
  singular: "NotebookEngine",
  profileKind: "notebookEngineProfiles",
  versionKind: "notebookEngineImages",
  versionField: "notebook_image",
  versionLocal: "notebookImage",
  versionInfoLocal: "notebookImageInfo",
  hasStorage: true,
  hasNodeCount: false,
  limitAction: "pause",
  // notebook_image changes on a paused or failed engine (docs/adr/0126).
  updatable: [
    "profile",
    "notebook_image",
    "cpu",
    "gpu",
    "memory_bytes",
    "display_name",
    "max_idle_duration",
    "max_running_duration",
  ],
  states: NOTEBOOK_STATES,
  allowed: {
    pause: [S.STARTING, S.RUNNING],
    resume: [S.PAUSED, S.FAILED],
    update: [S.PAUSED, S.FAILED],
    delete: ALL_BUT(NOTEBOOK_STATES, S.DELETING),
    resizeStorage: [S.RUNNING, S.PAUSED],
    access: [S.RUNNING],
  },
};

export const ENGINE_KINDS: readonly EngineKind[] = [DAI, H2O, NOTEBOOK];
export const KIND_BY_TYPE: Readonly<Record<EngineType, EngineKind>> = {
  daiEngines: DAI,
  h2oEngines: H2O,
  notebookEngines: NOTEBOOK,
};

/** Every state name of the mixed Engine list. */
export const ENGINE_STATE_NAMES: readonly string[] = Engine_StateSchema.values.map((v) => v.name);

/** The state names a kind's filters accept (its enum's values). */
export function stateNames(kind: EngineKind): string[] {
  return kind.stateEnum.values.map((v) => v.name);
}

/** The number of a state name in an enum (0 when absent). */
export function stateNumber(e: DescEnum, name: string): number {
  return e.values.find((v) => v.name === name)?.number ?? 0;
}

const ACTION_WORDS: Record<EngineAction, string> = {
  pause: "pause",
  resume: "resume",
  terminate: "terminate",
  update: "update",
  delete: "delete",
  resizeStorage: "resize the storage of",
  upgradeVersion: "upgrade",
  migrateCreator: "migrate the creator of",
  access: "access",
  downloadLogs: "download the logs of",
};

function listStates(states: readonly string[]): string {
  if (states.length <= 1) return states.join("");
  return `${states.slice(0, -1).join(", ")} or ${states[states.length - 1]}`;
}

/** Throws FAILED_PRECONDITION naming the state when `action` is not allowed in `state`. */
export function checkTransition(kind: EngineKind, action: EngineAction, name: string, state: string): void {
  const allowed = kind.allowed[action] ?? [];
  if ((allowed as readonly string[]).includes(state)) return;
  // Worded as the real service words it, since clients compare the text.
  if (allowed.length === 2 && allowed.includes(S.PAUSED) && allowed.includes(S.FAILED)) {
    throw failedPrecondition(
      `cannot ${ACTION_WORDS[action]} ${quote(name)}: engine must be paused or failed (the ${kind.label} is ${state})`,
      { type: "STATE", subject: name, description: `the engine is ${state}` },
    );
  }
  throw failedPrecondition(
    `cannot ${ACTION_WORDS[action]} ${quote(name)}: the ${kind.label} is ${state}; this needs ${listStates(allowed)}`,
    { type: "STATE", subject: name, description: `the engine is ${state}` },
  );
}

/**
 * Whether the observed state is where the desired state leads, so nothing is left to do.
 * A failed engine is settled too: it stays failed until someone acts on it.
 */
export function isSettled(state: string, desired: Desired): boolean {
  switch (desired) {
    case "RUNNING":
      return state === S.RUNNING || state === S.FAILED || state === S.TERMINATED;
    case "PAUSED":
      return state === S.PAUSED || state === S.FAILED || state === S.TERMINATED;
    case "TERMINATED":
      return state === S.TERMINATED;
    case "DELETED":
      return false;
  }
}

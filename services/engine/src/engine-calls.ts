// What the handlers of the DAI, H2O and notebook engine services share, once per kind: parsing
// names, loading an engine the caller may see, the catalogue references a request names
// (engine-catalogue-refs.ts), the caller's quotas (engine-quotas.ts), and the one transaction every
// state change runs in (engine-change.ts).
import type { HandlerContext } from "@connectrpc/connect";
import { notFound } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { canSee } from "./access.js";
import type { ServiceContext } from "./context.js";
import {
  catchUpFor,
  currentProfile,
  decodeStored,
  usableProfile,
  usableVersion,
  withCatalogue,
} from "./engine-catalogue-refs.js";
import { changeEngine, type Change } from "./engine-change.js";
import { checkQuotas, resourcesOf, type QuotaOptions } from "./engine-quotas.js";
import type { EngineKind } from "./kinds.js";
import { kindFieldTable, loadByName, present, type EngineRow, type Executor } from "./store.js";
import type { AnyProfile, Resources } from "./validation.js";

export type { Change } from "./engine-change.js";

export interface Target {
  readonly workspace: string;
  readonly id: string;
  readonly name: string;
}

/** What every engine call of one kind shares: names, loading, catalogue references, quotas and the state-change transaction. */
export function createEngineCalls(context: ServiceContext, kind: EngineKind) {
  const { policy } = context;

  function parseName(name: string, field = "name"): Target {
    const parts = kind.pattern.parse(name, field) as Record<string, string>;
    return { workspace: parts.workspace!, id: parts[kind.idVar]!, name };
  }

  /** The engine, if it exists and the caller may see it; NOT_FOUND otherwise. */
  async function mustLoad(
    exec: Executor,
    principal: Principal,
    target: { readonly name: string },
    forUpdate = false,
  ): Promise<EngineRow> {
    const row = await loadByName(exec, target.name, { forUpdate });
    if (!row || !canSee(policy, principal, row)) throw notFound(target.name, kind.resourceType);
    return row;
  }

  return {
    context,
    kind,
    policy,
    fieldTable: kindFieldTable(kind),
    db: () => context.database().db,
    /** A field of the kind's resource, as errors name it (`dai_engine.profile`). */
    f: (field: string) => `${kind.resourceField}.${field}`,
    parseName,
    mustLoad,
    usableProfile: (principal: Principal, name: string) => usableProfile(context, kind, principal, name),
    usableVersion: (name: string, field: string, missing?: (name: string) => string) =>
      usableVersion(context, kind, name, field, missing),
    withCatalogue: <T>(lookup: () => T) => withCatalogue(context, lookup),
    catchUpFor: (lookup: () => unknown) => catchUpFor(context, lookup),
    currentProfile: (row: EngineRow) => currentProfile(context, kind, row),
    decodeStored: (row: EngineRow) => decodeStored(kind, row),
    checkQuotas: (
      trx: Executor,
      creator: string,
      profile: AnyProfile,
      amounts: Resources | undefined,
      options: QuotaOptions,
    ) => checkQuotas(trx, kind, creator, profile, amounts, options),
    resourcesOf,
    change: <P = void>(name: string, ctx: HandlerContext, c: Change<P>) =>
      changeEngine({ context, kind, parseName, mustLoad }, name, ctx, c),
    /** The engine as the API answers it. */
    present: (row: EngineRow) => present(row, context.presentContext()),
  };
}

export type EngineCalls = ReturnType<typeof createEngineCalls>;

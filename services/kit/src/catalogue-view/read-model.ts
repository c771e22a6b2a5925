// A local, in-memory copy of the catalogue for the services that use it (engine, sandbox). It
// replays the catalogue replication stream from its start, which holds the latest state of every
// resource and a tombstone for each deleted one, then follows it live. Once `ready` resolves the
// copy is complete, so engine creation can validate against it without calling the catalogue. The
// maps are in catalogue-store.ts, the reading of a stream message in catalogue-message.ts.
//
// Usage:
//   const catalogue = createCatalogueReadModel({ bus });
//   await catalogue.ready;
//   const version = catalogue.get("daiEngineVersions", "workspaces/global/daiEngineVersions/latest");
import { CatalogueKind } from "../authz/index.js";
import { CATALOGUE_DOMAIN, SUBJECT_ROOT, type EventBus, type EventMessage } from "../events/index.js";
import { catalogueChangeOf, type CatalogueChange } from "./catalogue-message.js";
import { createCatalogueStore } from "./catalogue-store.js";
import type { CatalogueResourceByKind } from "./resources.js";

export type { CatalogueChange } from "./catalogue-message.js";

export interface CatalogueReadModelOptions {
  readonly bus: Pick<EventBus, "replay" | "lastSequence">;
  /** Keep only these kinds (default: all). */
  readonly kinds?: readonly CatalogueKind[];
  /** Names its replay in metrics (consumer lag) and traces; default `catalogue-view`. */
  readonly name?: string;
  readonly logger?: { warn(message: string, fields?: Record<string, unknown>): void };
}

export interface CatalogueReadModel {
  /** Resolves once everything stored in the stream at start-up has been applied. */
  readonly ready: Promise<void>;
  isReady(): boolean;
  /**
   * The resource named `name`, or undefined. For versions the last segment may be an alias
   * (`workspaces/global/daiEngineVersions/latest`); aliases are resolved within the workspace.
   */
  get<K extends CatalogueKind>(kind: K, name: string): CatalogueResourceByKind[K] | undefined;
  /** The canonical name `name` stands for (an alias resolved), if the resource exists. */
  resolveName(kind: CatalogueKind, name: string): string | undefined;
  /** Every resource of a kind, optionally of one workspace (`global` or `workspaces/global`), by name. */
  list<K extends CatalogueKind>(kind: K, workspace?: string): CatalogueResourceByKind[K][];
  /**
   * Resolves true once this copy has applied every message the catalogue stream held when called
   * (so every catalogue write acknowledged before then), or false at `deadline` (epoch ms).
   */
  caughtUp(deadline: number): Promise<boolean>;
  /** Calls `listener` after each applied change; returns the unsubscribe function. */
  subscribe(listener: (change: CatalogueChange) => void): () => void;
  stop(): Promise<void>;
}

/** Replays `enginemanager.catalogue.>` into maps by kind and name. */
export function createCatalogueReadModel(options: CatalogueReadModelOptions): CatalogueReadModel {
  const store = createCatalogueStore(new Set<CatalogueKind>(options.kinds ?? Object.values(CatalogueKind)));
  const listeners = new Set<(change: CatalogueChange) => void>();
  let ready = false;
  /** Stream sequence of the last message applied (or skipped as unreadable). */
  let applied = 0;
  const waiters = new Set<{ target: number; done: (caught: boolean) => void }>();

  function advance(seq: number): void {
    if (seq <= applied) return;
    applied = seq;
    for (const waiter of waiters) if (waiter.target <= applied) waiter.done(true);
  }

  function notify(change: CatalogueChange): void {
    for (const listener of listeners) {
      try {
        listener(change);
      } catch (err) {
        options.logger?.warn("catalogue read model listener failed", {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }

  async function handle(msg: EventMessage): Promise<void> {
    const change = catalogueChangeOf(msg, options.logger);
    if (change && store.apply(change.kind, change.name, change.resource)) notify(change);
    advance(msg.seq);
  }

  const replay = options.bus.replay(
    { name: options.name ?? "catalogue-view", subjects: `${SUBJECT_ROOT}.${CATALOGUE_DOMAIN}.>` },
    handle,
  );
  const readyPromise = replay.ready.then(() => {
    ready = true;
  });

  async function caughtUp(deadline: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
    });
    let target: number | false;
    try {
      target = await Promise.race([readyPromise.then(() => options.bus.lastSequence("catalogue")), timedOut]);
    } catch {
      // Stopped, or the bus cannot say: the copy answers with what it has.
      target = false;
    } finally {
      clearTimeout(timer);
    }
    if (target === false) return false;
    if (applied >= target) return true;
    return new Promise<boolean>((resolve) => {
      const waiter = {
        target: target as number,
        done(caught: boolean) {
          waiters.delete(waiter);
          clearTimeout(wait);
          resolve(caught);
        },
      };
      const wait = setTimeout(() => waiter.done(false), Math.max(0, deadline - Date.now()));
      waiters.add(waiter);
    });
  }

  return {
    ready: readyPromise,
    isReady: () => ready,
    get: store.get,
    resolveName: store.resolveName,
    list: store.list,
    caughtUp,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async stop() {
      for (const waiter of waiters) waiter.done(false);
      await replay.stop();
    },
  };
}

/** Profiles' role rule: usable when roles are not verified, or the caller holds one of the assigned roles. */
export function isProfileAssignedTo(
  profile: {
    readonly enabled: boolean;
    readonly assignedOidcRolesEnabled: boolean;
    readonly assignedOidcRoles: readonly string[];
  },
  roles: readonly string[],
): boolean {
  if (!profile.enabled) return false;
  if (!profile.assignedOidcRolesEnabled) return true;
  return profile.assignedOidcRoles.some((role) => roles.includes(role));
}

// A local, in-memory copy of the catalogue for the services that use it (engine, sandbox). It
// replays the catalogue replication stream from its start, which holds the latest state of every
// resource and a tombstone for each deleted one, then follows it live. Once `ready` resolves the
// copy is complete, so engine creation can validate against it without calling the catalogue.
//
// Usage:
//   const catalogue = createCatalogueReadModel({ bus });
//   await catalogue.ready;
//   const version = catalogue.get("daiEngineVersions", "workspaces/global/daiEngineVersions/latest");
import { fromBinary } from "@bufbuild/protobuf";
import { CatalogueKind } from "../authz/index.js";
import { CATALOGUE_DOMAIN, SUBJECT_ROOT, type EventBus, type EventMessage } from "../events/index.js";
import { EventSchema } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import {
  KIND_BY_EVENT_CASE,
  kindOfName,
  type CatalogueEventCase,
  type CatalogueResource,
  type CatalogueResourceByKind,
} from "./resources.js";

/** One change applied to the read model: the new state, or `resource` undefined for a deletion. */
export interface CatalogueChange {
  readonly kind: CatalogueKind;
  readonly name: string;
  readonly resource: CatalogueResource | undefined;
}

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
  const wanted = new Set<CatalogueKind>(options.kinds ?? Object.values(CatalogueKind));
  const resources = new Map<CatalogueKind, Map<string, CatalogueResource>>([...wanted].map((k) => [k, new Map()]));
  // `<kind>` -> `workspaces/w/alias` -> version name
  const aliases = new Map<CatalogueKind, Map<string, string>>();
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

  const workspaceOfName = (name: string) => name.slice(0, name.indexOf("/", "workspaces/".length));
  const aliasKey = (versionName: string, alias: string) => `${workspaceOfName(versionName)}/${alias}`;

  function unindexAliases(kind: CatalogueKind, previous: CatalogueResource | undefined): void {
    const old = (previous as { aliases?: string[] } | undefined)?.aliases;
    if (!previous || !old) return;
    const index = aliases.get(kind);
    for (const alias of old) {
      const key = aliasKey(previous.name, alias);
      if (index?.get(key) === previous.name) index.delete(key);
    }
  }

  function apply(kind: CatalogueKind, name: string, resource: CatalogueResource | undefined): void {
    const map = resources.get(kind);
    if (!map) return;
    const previous = map.get(name);
    unindexAliases(kind, previous);
    if (resource) {
      map.set(name, resource);
      const own = (resource as { aliases?: string[] }).aliases;
      if (own?.length) {
        let index = aliases.get(kind);
        if (!index) aliases.set(kind, (index = new Map()));
        for (const alias of own) index.set(aliasKey(name, alias), name);
      }
    } else {
      map.delete(name);
    }
    for (const listener of listeners) {
      try {
        listener({ kind, name, resource });
      } catch (err) {
        options.logger?.warn("catalogue read model listener failed", {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }

  async function handle(msg: EventMessage): Promise<void> {
    applyMessage(msg);
    advance(msg.seq);
  }

  function applyMessage(msg: EventMessage): void {
    let event;
    try {
      event = fromBinary(EventSchema, msg.data);
    } catch (err) {
      // A message nobody can read would stop the replay forever; skip it loudly instead.
      options.logger?.warn("skipping an undecodable catalogue event", {
        subject: msg.subject,
        error: (err as Error).message,
      });
      return;
    }
    const payload = event.payload;
    if (payload.case === "catalogueResourceChanged") {
      const inner = payload.value.resource;
      const kind = inner.case ? KIND_BY_EVENT_CASE[inner.case as CatalogueEventCase] : undefined;
      if (!kind || !inner.value) return;
      apply(kind, inner.value.name, inner.value as CatalogueResource);
    } else if (payload.case === "catalogueResourceDeleted") {
      const kind = kindOfName(payload.value.name);
      if (kind) apply(kind, payload.value.name, undefined);
    }
    // Other payloads, or none (a type added after this reader was built), are skipped.
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

  function resolveName(kind: CatalogueKind, name: string): string | undefined {
    const map = resources.get(kind);
    if (!map) return undefined;
    if (map.has(name)) return name;
    const slash = name.lastIndexOf("/");
    if (slash < 0) return undefined;
    const target = aliases.get(kind)?.get(`${workspaceOfName(name)}/${name.slice(slash + 1)}`);
    return target !== undefined && map.has(target) ? target : undefined;
  }

  return {
    ready: readyPromise,
    isReady: () => ready,
    get<K extends CatalogueKind>(kind: K, name: string) {
      const canonical = resolveName(kind, name);
      return canonical === undefined ? undefined : (resources.get(kind)!.get(canonical) as CatalogueResourceByKind[K]);
    },
    resolveName,
    list<K extends CatalogueKind>(kind: K, workspace?: string) {
      const prefix =
        workspace === undefined
          ? undefined
          : `${workspace.startsWith("workspaces/") ? workspace : `workspaces/${workspace}`}/`;
      return [...(resources.get(kind)?.values() ?? [])]
        .filter((r) => prefix === undefined || r.name.startsWith(prefix))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) as CatalogueResourceByKind[K][];
    },
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

// The handlers of the eight catalogue services, written once over the kind descriptors. Each call
// parses its names, authorizes on the workspace, validates the rest, and makes its change in one
// transaction together with the event that replicates it.
import { randomInt } from "node:crypto";
import { clone } from "@bufbuild/protobuf";
import type { ConnectRouter, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { sql } from "kysely";
import {
  checkField,
  checkUpdateMask,
  isAlias,
  paginate,
  validateAlias,
  validateResourceId,
  workspacePattern,
} from "@aiem/kit/aip";
import { Action, permissionName } from "@aiem/kit/authz";
import { alreadyExists, invalidArgument, notFound, permissionDenied, quote, requiredField } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf, registerGuarded } from "@aiem/kit/server";
import { FieldBehavior } from "@aiem/proto/google/api/field_behavior_pb.js";
import type { CatalogueKind } from "@aiem/kit/authz";
import { ALL_KINDS, type CatalogueResource, type CatalogueServices, type KindDescriptor } from "./kinds.js";
import { orEmpty, type Runtime } from "./runtime.js";
import {
  applyPaths,
  clearOutputOnly,
  decode,
  defaultOrderOf,
  deleteResource,
  enqueueChanged,
  enqueueDeleted,
  fieldTableOf,
  fieldsWith,
  insertResource,
  loadResource,
  nameTiebreaker,
  present,
  stampCreate,
  stampUpdate,
  updateResource,
  type Executor,
} from "./store.js";
import { Violations } from "./validation.js";

/**
 * A request of any kind's call, read by the field names its kind descriptor holds
 * (`req[d.idLocal]`); the handler maps are typed by each kind's service (`CatalogueHandlers`).
 */
// biome-ignore lint/suspicious/noExplicitAny: requests of every kind, their fields read by name from the kind descriptor
type Req = Record<string, any>;
type Handler = (req: Req, ctx: HandlerContext) => Promise<unknown>;

/** The handlers of each kind, typed by the kind's service. */
export type CatalogueHandlers = { readonly [K in CatalogueKind]: ServiceImpl<CatalogueServices[K]> };

/** Most aliases one version may hold. */
export const MAX_ALIASES = 64;

interface Target {
  readonly workspace: string;
  /** The id segment as given: a version id, or for versions possibly an alias. */
  readonly segment: string;
  readonly name: string;
}

function parseName(d: KindDescriptor, name: string, field: string): Target {
  const parts = d.pattern.parse(name, field) as Record<string, string>;
  return { workspace: parts.workspace!, segment: parts[d.idVar]!, name };
}

/** The version id an alias stands for, or the segment itself when it is not an alias. */
export async function resolveVersionId(
  exec: Executor,
  d: KindDescriptor,
  workspace: string,
  segment: string,
): Promise<string | undefined> {
  if (d.family !== "version" || !isAlias(segment)) return segment;
  const row = (await exec
    .selectFrom("version_aliases")
    .select("version_id")
    .where("kind", "=", d.kind)
    .where("workspace", "=", workspace)
    .where("alias", "=", segment)
    .executeTakeFirst()) as { version_id: string } | undefined;
  return row?.version_id;
}

/** Loads the resource a request names (aliases resolved), or throws NOT_FOUND with that name. */
async function mustLoad(
  exec: Executor,
  d: KindDescriptor,
  t: Target,
  forUpdate = false,
): Promise<{ id: string; resource: CatalogueResource }> {
  const id = await resolveVersionId(exec, d, t.workspace, t.segment);
  const resource = id === undefined ? undefined : await loadResource(exec, d, t.workspace, id, { forUpdate });
  if (!resource || id === undefined) throw notFound(t.name, d.resourceType);
  return { id, resource };
}

interface RoleRestricted {
  assignedOidcRolesEnabled: boolean;
  assignedOidcRoles: string[];
}

/** Whether a profile's role restriction (if it is on) admits someone holding `roles`. */
function holdsAssignedRole(profile: RoleRestricted, roles: readonly string[]): boolean {
  return !profile.assignedOidcRolesEnabled || profile.assignedOidcRoles.some((role) => roles.includes(role));
}

function validateResource(d: KindDescriptor, r: CatalogueResource, more?: (v: Violations) => void): void {
  const v = new Violations(d.resourceField);
  (d.validate as (r: CatalogueResource, v: Violations) => void)(r, v);
  more?.(v);
  v.throwIfAny();
}

function prepare(d: KindDescriptor, r: CatalogueResource): void {
  (d.prepare as ((r: CatalogueResource) => void) | undefined)?.(r);
}

/** A server-chosen id: a slug of the display name when it has one, and a random suffix. */
export function generateId(word: string, displayName: string): string {
  const slug = displayName
    .toLowerCase()
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let suffix = "";
  for (let i = 0; i < 6; i++) suffix += alphabet[randomInt(alphabet.length)];
  const id = `${slug || word}-${suffix}`;
  return validateResourceId(id) === undefined ? id : `${word}-${suffix}`;
}

/** The update-mask rules of a kind: its section 5 paths; immutable and output-only fields named as such. */
function maskRules(d: KindDescriptor) {
  const immutable = [
    ...fieldsWith(d.schema, FieldBehavior.IMMUTABLE),
    ...fieldsWith(d.schema, FieldBehavior.IDENTIFIER),
  ];
  const outputOnly = fieldsWith(d.schema, FieldBehavior.OUTPUT_ONLY);
  return { allowed: d.updatable, immutable, outputOnly };
}

function checkMask(d: KindDescriptor, paths: readonly string[] | undefined): string[] {
  const rules = maskRules(d);
  for (const path of paths ?? []) {
    if (d.family === "version" && path === "aliases") {
      throw invalidArgument("update_mask", `${quote(path)} is set on create or through :assignAliases`);
    }
    if (rules.outputOnly.includes(path)) {
      throw invalidArgument("update_mask", `${quote(path)} is set by the server and cannot be updated`);
    }
  }
  return checkUpdateMask(paths, { allowed: rules.allowed, immutable: rules.immutable });
}

export function createKindHandlers<K extends CatalogueKind>(
  runtime: Runtime,
  descriptor: KindDescriptor<K>,
): CatalogueHandlers[K] {
  // The calls are written once over every kind: the kind-specific types matter only at the edges,
  // the request and response messages, which the service type fixes.
  const d = descriptor as unknown as KindDescriptor;
  const { policy } = runtime;
  const fieldTable = fieldTableOf(d);
  const db = () => runtime.database().db;

  async function create_(req: Req, ctx: HandlerContext) {
    const principal = principalOf(ctx);
    const { workspace } = workspacePattern.parse(req.parent, "parent");
    policy.check(principal, Action.CREATE, d.kind, workspace);
    const resource = clone(d.schema, orEmpty(d.schema, req[d.resourceLocal])) as CatalogueResource;
    clearOutputOnly(d.schema, resource as never);
    let id: string = req[d.idLocal] ?? "";
    const generated = id === "" && d.generatedIdWord !== undefined;
    if (id === "" && !generated) throw requiredField(d.idField);
    if (!generated) checkField(d.idField, id, d.validateId);
    prepare(d, resource);
    // A version created with aliases takes them, from another version of the workspace if need
    // be, as :assignAliases would (the official client's configs declare them on create).
    const version = d.family === "version" ? (resource as CatalogueResource & { aliases: string[] }) : undefined;
    // The name is not part of validation, so a bad request fails before any id is generated.
    validateResource(d, resource, version && ((v) => (version.aliases = aliasesOf(version.aliases, v))));
    const aliases = version?.aliases ?? [];
    const now = runtime.now();
    stampCreate(resource, principal, now);
    for (let attempt = 0; ; attempt++) {
      if (generated) id = generateId(d.generatedIdWord!, (resource as { displayName?: string }).displayName ?? "");
      resource.name = d.pattern.format({ workspace, [d.idVar]: id });
      const inserted = await runtime.write(async (trx) => {
        if (aliases.length > 0) await lockVersions(trx, d, workspace);
        if (!(await insertResource(trx, d, workspace, id, resource))) return false;
        if (aliases.length > 0) await takeAliases(trx, d, workspace, id, aliases, principal, now);
        await enqueueChanged(trx, d, workspace, id, resource, now);
        return true;
      });
      if (inserted) return { [d.resourceLocal]: present(d, resource) };
      if (!generated || attempt >= 4) throw alreadyExists(resource.name, d.resourceType);
    }
  }

  async function get(req: Req, ctx: HandlerContext) {
    const t = parseName(d, req.name, "name");
    const principal = principalOf(ctx);
    policy.check(principal, Action.GET, d.kind, t.workspace);
    const { resource } = await mustLoad(db(), d, t);
    // A profile restricted to roles the caller holds none of is hidden from a non-administrator,
    // as if it did not exist, as the real service answers.
    if (
      d.family === "profile" &&
      !policy.isAdmin(principal) &&
      !holdsAssignedRole(resource as RoleRestricted, principal.roles)
    )
      throw notFound(t.name, d.resourceType);
    return { [d.resourceLocal]: present(d, resource) };
  }

  async function list(req: Req, ctx: HandlerContext) {
    const { workspace } = workspacePattern.parse(req.parent, "parent");
    const principal = principalOf(ctx);
    policy.check(principal, Action.LIST, d.kind, workspace);
    // Every profile, restricted ones included, is for administrators to list; everyone else
    // lists the profiles assigned to them (:listAssigned), as the real service answers.
    if (d.family === "profile" && !policy.isAdmin(principal)) {
      throw permissionDenied(
        `permission denied: ${principal.name} lacks ${permissionName(d.kind, Action.LIST)} on workspaces/${workspace}: ` +
          `only administrators list every profile; list the ones assigned to you with :listAssigned`,
      );
    }
    const page = await paginate(db().selectFrom(d.table).select("resource").where("workspace", "=", workspace), {
      parent: req.parent,
      pageSize: req.pageSize,
      pageToken: req.pageToken,
      filter: req.filter,
      orderBy: req.orderBy,
      defaultOrderBy: defaultOrderOf(d),
      table: fieldTable,
      tiebreaker: nameTiebreaker,
      tokens: runtime.tokens(),
      scope: d.kind,
    });
    return {
      [d.pluralLocal]: page.rows.map((row) => present(d, decode(d, (row as { resource: Uint8Array }).resource))),
      nextPageToken: page.nextPageToken,
    };
  }

  async function update(req: Req, ctx: HandlerContext) {
    const principal = principalOf(ctx);
    const incoming = req[d.resourceLocal] as CatalogueResource | undefined;
    if (!incoming) throw requiredField(d.resourceField);
    const t = parseName(d, incoming.name, `${d.resourceField}.name`);
    policy.check(principal, Action.UPDATE, d.kind, t.workspace);
    const paths = checkMask(d, req.updateMask?.paths);
    const now = runtime.now();
    const updated = await runtime.write(async (trx) => {
      const { id, resource } = await mustLoad(trx, d, t, true);
      applyPaths(d.schema, resource as never, incoming as never, paths);
      prepare(d, resource);
      validateResource(d, resource);
      stampUpdate(resource, principal, now);
      await updateResource(trx, d, t.workspace, id, resource);
      await enqueueChanged(trx, d, t.workspace, id, resource, now);
      return resource;
    });
    return { [d.resourceLocal]: present(d, updated) };
  }

  async function delete_(req: Req, ctx: HandlerContext) {
    const t = parseName(d, req.name, "name");
    policy.check(principalOf(ctx), Action.DELETE, d.kind, t.workspace);
    const now = runtime.now();
    await runtime.write(async (trx) => {
      const id = await resolveVersionId(trx, d, t.workspace, t.segment);
      if (id === undefined || !(await deleteResource(trx, d, t.workspace, id))) throw notFound(t.name, d.resourceType);
      if (d.family === "version") {
        await trx
          .deleteFrom("version_aliases")
          .where("kind", "=", d.kind)
          .where("workspace", "=", t.workspace)
          .where("version_id", "=", id)
          .execute();
      }
      await enqueueDeleted(trx, d, t.workspace, id, d.pattern.format({ workspace: t.workspace, [d.idVar]: id }), now);
    });
    return {};
  }

  const handlers: Record<string, Handler> = {
    [`create${d.singular}`]: create_,
    [`get${d.singular}`]: get,
    [`list${d.singular}s`]: list,
    [`update${d.singular}`]: update,
    [`delete${d.singular}`]: delete_,
  };

  if (d.family === "profile") {
    handlers[`copy${d.singular}`] = async (req: Req, ctx: HandlerContext) => {
      const principal = principalOf(ctx);
      const source = parseName(d, req.name, "name");
      const { workspace } = workspacePattern.parse(req.parent, "parent");
      const id: string = req[d.idLocal] ?? "";
      if (id === "") throw requiredField(d.idField);
      policy.check(principal, Action.GET, d.kind, source.workspace);
      policy.check(principal, Action.CREATE, d.kind, workspace);
      checkField(d.idField, id, d.validateId);
      const now = runtime.now();
      const copy = await runtime.write(async (trx) => {
        const { resource } = await mustLoad(trx, d, source);
        resource.name = d.pattern.format({ workspace, [d.idVar]: id });
        stampCreate(resource, principal, now);
        if (!(await insertResource(trx, d, workspace, id, resource)))
          throw alreadyExists(resource.name, d.resourceType);
        await enqueueChanged(trx, d, workspace, id, resource, now);
        return resource;
      });
      return { [d.resourceLocal]: present(d, copy) };
    };

    handlers[`listAssigned${d.singular}s`] = async (req: Req, ctx: HandlerContext) => {
      const principal = principalOf(ctx);
      const { workspace } = workspacePattern.parse(req.parent, "parent");
      policy.check(principal, Action.LIST_ASSIGNED, d.kind, workspace);
      const roles = [...new Set(principal.roles)];
      const usable =
        roles.length === 0
          ? sql<boolean>`not assigned_oidc_roles_enabled`
          : sql<boolean>`(not assigned_oidc_roles_enabled or assigned_oidc_roles && ARRAY[${sql.join(roles)}]::text[])`;
      const query = db()
        .selectFrom(d.table)
        .select("resource")
        .where("workspace", "=", workspace)
        .where("enabled", "=", true)
        .where(usable);
      const page = await paginate(query, {
        parent: req.parent,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        orderBy: "priority, name",
        table: fieldTable,
        tiebreaker: nameTiebreaker,
        tokens: runtime.tokens(),
        scope: `${d.kind}:listAssigned`,
      });
      return {
        [d.pluralLocal]: page.rows.map((row) => present(d, decode(d, (row as { resource: Uint8Array }).resource))),
        nextPageToken: page.nextPageToken,
      };
    };
  }

  if (d.family === "version") {
    handlers[`assign${d.singular}Aliases`] = async (req: Req, ctx: HandlerContext) => {
      const principal = principalOf(ctx);
      const t = parseName(d, req.name, "name");
      policy.check(principal, Action.ASSIGN_ALIASES, d.kind, t.workspace);
      const aliases = checkAliases(req.aliases ?? []);
      const now = runtime.now();
      await runtime.write((trx) => assignAliases(trx, d, t, aliases, principal, now));
      // Every version of the workspace, in the order lists answer: newest version first.
      const rows = (await db()
        .selectFrom(d.table)
        .select("resource")
        .where("workspace", "=", t.workspace)
        .orderBy("version_key", "desc")
        .orderBy("name", "desc")
        .execute()) as Array<{ resource: Uint8Array }>;
      return { [d.pluralLocal]: rows.map((row) => present(d, decode(d, row.resource))) };
    };
  }
  // Built from the kind's descriptor, under the local names of its service's methods; the type
  // checker cannot follow keys made at run time, so the map is given its service's type here, and
  // registration (registerGuarded) still refuses a method without a handler.
  return handlers as unknown as CatalogueHandlers[K];
}

function checkAliases(aliases: readonly string[]): string[] {
  const v = new Violations("");
  const unique = aliasesOf(aliases, v);
  v.throwIfAny();
  return unique;
}

/** The aliases without repeats, sorted, as the real service answers them; problems are added to `v`. */
function aliasesOf(aliases: readonly string[], v: Violations): string[] {
  if (aliases.length > MAX_ALIASES) v.add("aliases", `may hold at most ${MAX_ALIASES} aliases`);
  aliases.forEach((alias, i) => {
    const problem = validateAlias(alias);
    if (problem) v.add(`aliases[${i}]`, problem);
  });
  return [...new Set(aliases)].sort();
}

/** Locks the versions of a workspace in name order, so concurrent alias changes cannot deadlock. */
async function lockVersions(trx: Executor, d: KindDescriptor, workspace: string): Promise<void> {
  await sql`select 1 from ${sql.table(d.table)} where workspace = ${workspace} order by name for update`.execute(trx);
}

/**
 * Points `aliases` at version `id` (whose stored resource already lists them, or is about to):
 * each other version of the workspace holding one of them loses it and is republished, and the
 * alias rows of `id` become exactly `aliases`. The caller holds lockVersions.
 */
async function takeAliases(
  trx: Executor,
  d: KindDescriptor,
  workspace: string,
  id: string,
  aliases: string[],
  principal: Principal,
  now: Date,
): Promise<number> {
  const taken =
    aliases.length === 0
      ? []
      : ((await trx
          .selectFrom("version_aliases")
          .select(["alias", "version_id"])
          .where("kind", "=", d.kind)
          .where("workspace", "=", workspace)
          .where("alias", "in", aliases)
          .where("version_id", "<>", id)
          .execute()) as Array<{ alias: string; version_id: string }>);
  const losers = new Map<string, string[]>();
  for (const row of taken) losers.set(row.version_id, [...(losers.get(row.version_id) ?? []), row.alias]);
  for (const [loserId, lost] of losers) {
    const loser = (await loadResource(trx, d, workspace, loserId)) as
      | (CatalogueResource & { aliases: string[] })
      | undefined;
    if (!loser) continue;
    loser.aliases = loser.aliases.filter((a) => !lost.includes(a));
    stampUpdate(loser, principal, now);
    await updateResource(trx, d, workspace, loserId, loser);
    await enqueueChanged(trx, d, workspace, loserId, loser, now);
  }
  await trx
    .deleteFrom("version_aliases")
    .where("kind", "=", d.kind)
    .where("workspace", "=", workspace)
    .where((eb) => eb.or([eb("version_id", "=", id), ...(aliases.length ? [eb("alias", "in", aliases)] : [])]))
    .execute();
  if (aliases.length > 0) {
    await trx
      .insertInto("version_aliases")
      .values(aliases.map((alias) => ({ kind: d.kind, workspace, alias, version_id: id })))
      .execute();
  }
  return losers.size;
}

/**
 * Gives the version exactly `aliases`; an alias another version of the workspace holds moves
 * here, and that version is republished without it. The versions of the workspace are locked in
 * name order first, so concurrent assignments cannot deadlock.
 */
async function assignAliases(
  trx: Executor,
  d: KindDescriptor,
  t: Target,
  aliases: string[],
  principal: Principal,
  now: Date,
): Promise<void> {
  await lockVersions(trx, d, t.workspace);
  const { id, resource } = await mustLoad(trx, d, t);
  const version = resource as CatalogueResource & { aliases: string[] };
  const same = version.aliases.length === aliases.length && version.aliases.every((a, i) => a === aliases[i]);
  const moved = await takeAliases(trx, d, t.workspace, id, aliases, principal, now);
  if (same && moved === 0) return;
  version.aliases = aliases;
  stampUpdate(version, principal, now);
  await updateResource(trx, d, t.workspace, id, version);
  await enqueueChanged(trx, d, t.workspace, id, version, now);
}

/** Registers the eight catalogue services. Every method of each service gets a handler. */
export function registerCatalogueServices(
  router: ConnectRouter,
  runtime: Runtime,
  kinds: readonly KindDescriptor[] = ALL_KINDS,
): void {
  for (const d of kinds) registerKind(router, runtime, d);
}

function registerKind<K extends CatalogueKind>(router: ConnectRouter, runtime: Runtime, d: KindDescriptor<K>): void {
  registerGuarded(router, d.service, createKindHandlers(runtime, d), { logger: runtime.logger, label: "catalogue" });
}

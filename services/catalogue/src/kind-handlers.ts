// The handlers of the eight catalogue services, written once over the kind descriptors: the
// standard methods for every kind (standard-handlers.ts), and what profiles and versions add.
import type { ConnectRouter, HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { CatalogueKind } from "@aiem/kit/authz";
import { registerGuarded } from "@aiem/kit/server";
import { createKindScope } from "./kind-scope.js";
import { ALL_KINDS, type CatalogueServices, type KindDescriptor } from "./kinds.js";
import { handleCopy, handleListAssigned } from "./profile-handlers.js";
import type { ServiceContext } from "./service-context.js";
import { handleCreate, handleDelete, handleGet, handleList, handleUpdate } from "./standard-handlers.js";
import { handleAssignAliases } from "./version-handlers.js";

/** The handlers of each kind, typed by the kind's service. */
export type CatalogueHandlers = { readonly [K in CatalogueKind]: ServiceImpl<CatalogueServices[K]> };

/** A handler of some kind's call; each narrows the request to the fields it reads. */
type KindHandler = (req: never, ctx: HandlerContext) => Promise<unknown>;

export function createKindHandlers<K extends CatalogueKind>(
  context: ServiceContext,
  descriptor: KindDescriptor<K>,
): CatalogueHandlers[K] {
  // The calls are written once over every kind: the kind-specific types matter only at the edges,
  // the request and response messages, which the service type fixes.
  const d = descriptor as unknown as KindDescriptor;
  const scope = createKindScope(context, d);
  const handlers: Record<string, KindHandler> = {
    [`create${d.singular}`]: (req, ctx) => handleCreate(scope, req, ctx),
    [`get${d.singular}`]: (req, ctx) => handleGet(scope, req, ctx),
    [`list${d.singular}s`]: (req, ctx) => handleList(scope, req, ctx),
    [`update${d.singular}`]: (req, ctx) => handleUpdate(scope, req, ctx),
    [`delete${d.singular}`]: (req, ctx) => handleDelete(scope, req, ctx),
  };
  if (d.family === "profile") {
    handlers[`copy${d.singular}`] = (req, ctx) => handleCopy(scope, req, ctx);
    handlers[`listAssigned${d.singular}s`] = (req, ctx) => handleListAssigned(scope, req, ctx);
  }
  if (d.family === "version") {
    handlers[`assign${d.singular}Aliases`] = (req, ctx) => handleAssignAliases(scope, req, ctx);
  }
  // Built from the kind's descriptor, under the local names of its service's methods; the type
  // checker cannot follow keys made at run time, so the map is given its service's type here, and
  // registration (registerGuarded) still refuses a method without a handler.
  return handlers as unknown as CatalogueHandlers[K];
}

/** Registers the eight catalogue services. Every method of each service gets a handler. */
export function registerCatalogueServices(
  router: ConnectRouter,
  context: ServiceContext,
  kinds: readonly KindDescriptor[] = ALL_KINDS,
): void {
  for (const d of kinds) registerKind(router, context, d);
}

function registerKind<K extends CatalogueKind>(
  router: ConnectRouter,
  context: ServiceContext,
  d: KindDescriptor<K>,
): void {
  registerGuarded(router, d.service, createKindHandlers(context, d), { logger: context.logger, label: "catalogue" });
}

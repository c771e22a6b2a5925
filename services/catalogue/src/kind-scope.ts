// What the handlers of one catalogue kind share, and the requests they read. The calls are written
// once over every kind: the kind-specific types matter only at the edges, the request and response
// messages, which each kind's service type fixes (CatalogueHandlers in kind-handlers.ts).
import type { FieldTable } from "@aiem/kit/aip";
import type { CatalogueResource, KindDescriptor } from "./kinds.js";
import type { ServiceContext } from "./service-context.js";
import { fieldTableOf } from "./store.js";

export interface KindScope {
  readonly context: ServiceContext;
  readonly d: KindDescriptor;
  readonly fieldTable: FieldTable;
}

export function createKindScope(context: ServiceContext, d: KindDescriptor): KindScope {
  return { context, d, fieldTable: fieldTableOf(d) };
}

/**
 * A request that carries fields named after its kind (`daiEngineProfileId`, `daiEngineProfile`),
 * read through the descriptor with idOf and resourceOf.
 */
export interface KindFieldsRequest {
  readonly [field: string]: unknown;
}

export interface NamedRequest {
  readonly name: string;
}

export interface CreateRequest extends KindFieldsRequest {
  readonly parent: string;
}

export interface UpdateRequest extends KindFieldsRequest {
  readonly updateMask?: { readonly paths: readonly string[] };
}

/** The id a create or copy request asks for; empty when it asks for none. */
export function idOf(d: KindDescriptor, req: KindFieldsRequest): string {
  return (req[d.idLocal] as string | undefined) ?? "";
}

/** The resource a create or update request carries. */
export function resourceOf(d: KindDescriptor, req: KindFieldsRequest): CatalogueResource | undefined {
  return req[d.resourceLocal] as CatalogueResource | undefined;
}

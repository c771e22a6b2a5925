// The route table, exact matching, and loading a route's chunk. Page chunks are cached once they
// load; a failed load is forgotten so that Retry and later navigations fetch again.
import type { ComponentType } from "react";
import { loaders, routes } from "virtual:aiem/routes";
import type { PageContent, RouteInfo } from "../site-types.js";

export type LoadedRoute = { kind: "page"; page: PageContent } | { kind: "component"; Component: ComponentType };

const componentLoaders: Record<string, () => Promise<LoadedRoute>> = {
  search: () => import("../pages/search-page.js").then((m) => ({ kind: "component", Component: m.SearchPage })),
};

const byPath = new Map<string, RouteInfo>(routes.map((r) => [r.path, r]));

/** The route for a path relative to the base, or undefined: only exact matches count. */
export function matchRoute(path: string): RouteInfo | undefined {
  return byPath.get(path);
}

const cache = new Map<string, Promise<LoadedRoute>>();

export function loadRoute(path: string): Promise<LoadedRoute> {
  const cached = cache.get(path);
  if (cached) return cached;
  const pageLoader = loaders[path];
  const load = pageLoader
    ? () => pageLoader().then((m): LoadedRoute => ({ kind: "page", page: m.page }))
    : componentLoaders[path];
  if (!load) return Promise.reject(new Error(`No page at ${path}`));
  const promise = load();
  cache.set(path, promise);
  promise.catch(() => cache.delete(path));
  return promise;
}

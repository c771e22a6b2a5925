// The state of the current route. Navigation keeps the old page on screen until the new page's
// chunk has loaded (`pending` drives the progress bar); if that load fails the page reloads, once,
// and a failure after the reload shows the error with Retry instead of reloading again.
import { useCallback, useEffect, useRef, useState } from "react";
import type { RouteInfo } from "../site-types.js";
import { readLocation, subscribe, type NavigationKind, type SiteLocation } from "./navigation.js";
import { claimReload, clearReload } from "./reload-guard.js";
import { loadRoute, matchRoute, type LoadedRoute } from "./routes.js";

export interface RouteState {
  location: SiteLocation;
  kind: NavigationKind;
  route: RouteInfo | undefined;
  loaded: LoadedRoute | undefined;
  error: unknown;
}

function stateFor(location: SiteLocation, kind: NavigationKind): RouteState {
  return { location, kind, route: matchRoute(location.path), loaded: undefined, error: undefined };
}

export function useRouteState(): { state: RouteState; pending: boolean; retry: () => void } {
  const [state, setState] = useState<RouteState>(() => stateFor(readLocation(), "initial"));
  const [pending, setPending] = useState(false);
  const stateRef = useRef(state);
  stateRef.current = state;
  const generation = useRef(0);

  const load = useCallback((next: RouteState) => {
    const id = ++generation.current;
    const route = next.route!;
    loadRoute(route.path).then(
      (loaded) => {
        if (id !== generation.current) return;
        clearReload(window.sessionStorage);
        setPending(false);
        setState({ ...next, loaded, error: undefined });
      },
      (error: unknown) => {
        if (id !== generation.current) return;
        setPending(false);
        if (next.kind !== "initial" && claimReload(route.path, window.sessionStorage)) {
          console.warn(`Loading ${route.path || "the home page"} failed; reloading the page.`, error);
          window.location.reload();
          return;
        }
        setState({ ...next, loaded: undefined, error });
      },
    );
  }, []);

  useEffect(() => {
    const first = stateRef.current;
    if (first.route && !first.loaded) load(first);
    return subscribe((location, kind) => {
      const current = stateRef.current;
      if (location.path === current.location.path && current.loaded) {
        generation.current++;
        setPending(false);
        setState({ ...current, location, kind });
        return;
      }
      const next = stateFor(location, kind);
      if (!next.route) {
        generation.current++;
        setPending(false);
        setState(next);
        return;
      }
      setPending(true);
      load(next);
    });
  }, [load]);

  const retry = useCallback(() => {
    const current = stateRef.current;
    if (!current.route) return;
    const next = { ...current, kind: "initial" as const, error: undefined };
    setState(next);
    load(next);
  }, [load]);

  return { state, pending, retry };
}

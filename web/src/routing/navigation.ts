// Client-side navigation over the History API: one listener list, link interception for every
// same-site link on the page, and scroll positions kept in history entries.
import { relativePath } from "./site-url.js";

export interface SiteLocation {
  /** Relative to the base path. */
  path: string;
  search: string;
  hash: string;
}

export type NavigationKind = "initial" | "push" | "replace" | "pop";

type Listener = (location: SiteLocation, kind: NavigationKind) => void;

const listeners = new Set<Listener>();

export function readLocation(): SiteLocation {
  return {
    path: relativePath(window.location.pathname) ?? window.location.pathname,
    search: window.location.search,
    hash: window.location.hash,
  };
}

export function subscribe(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function emit(kind: NavigationKind): void {
  const location = readLocation();
  for (const l of listeners) l(location, kind);
}

/** Goes to a URL of this site without reloading; `replace` keeps the history length. */
export function navigate(url: string, options: { replace?: boolean } = {}): void {
  const target = new URL(url, window.location.href);
  if (options.replace) {
    window.history.replaceState(window.history.state, "", target);
  } else {
    // Remember where the reader was, so Back returns to the same place.
    window.history.replaceState({ ...window.history.state, scroll: window.scrollY }, "");
    window.history.pushState({}, "", target);
  }
  emit(options.replace ? "replace" : "push");
}

export function savedScroll(): number | undefined {
  const value = (window.history.state as { scroll?: unknown } | null)?.scroll;
  return typeof value === "number" ? value : undefined;
}

/** The site-relative path of a link the app should handle itself, or undefined. */
export function internalTarget(anchor: HTMLAnchorElement): string | undefined {
  if (anchor.target && anchor.target !== "_self") return undefined;
  if (anchor.hasAttribute("download") || !anchor.hasAttribute("href")) return undefined;
  const url = new URL(anchor.href, window.location.href);
  if (url.origin !== window.location.origin) return undefined;
  return relativePath(url.pathname);
}

let started = false;

/** Intercepts clicks on same-site links anywhere in the document and follows History changes. */
export function startNavigation(): void {
  if (started) return;
  started = true;
  window.history.scrollRestoration = "manual";
  window.addEventListener("popstate", () => emit("pop"));
  document.addEventListener("click", (event) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return;
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor || internalTarget(anchor) === undefined) return;
    const url = new URL(anchor.href);
    // Same page, only the fragment differs: the browser scrolls by itself.
    if (url.pathname === window.location.pathname && url.search === window.location.search && url.hash) return;
    event.preventDefault();
    navigate(url.href);
  });
}

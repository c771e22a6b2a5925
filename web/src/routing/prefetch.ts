// Prefetching: links that scroll into view load their page chunk while the browser is idle, and
// hovering a link loads it at once. Both are skipped on 2g connections and with Save-Data on,
// where readers pay for every byte.
import { internalTarget } from "./navigation.js";
import { canPrefetch as allowed, currentConnection } from "./network.js";
import { loadRoute, matchRoute } from "./routes.js";

const canPrefetch = () => allowed(currentConnection());

const requested = new Set<string>();

export function prefetchPath(path: string): void {
  if (requested.has(path) || !matchRoute(path) || !canPrefetch()) return;
  requested.add(path);
  // A failed prefetch is not an error the reader sees; the navigation tries again.
  loadRoute(path).catch(() => requested.delete(path));
}

const whenIdle = (fn: () => void) =>
  "requestIdleCallback" in window ? window.requestIdleCallback(fn, { timeout: 2000 }) : setTimeout(fn, 300);

let observer: IntersectionObserver | undefined;

function linkObserver(): IntersectionObserver {
  observer ??= new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer!.unobserve(entry.target);
      const path = internalTarget(entry.target as HTMLAnchorElement);
      if (path !== undefined) whenIdle(() => prefetchPath(path));
    }
  });
  return observer;
}

/** Watches the same-site links inside a container; returns a function that stops watching. */
export function observeLinks(container: Element | null): () => void {
  if (!container || !canPrefetch() || !("IntersectionObserver" in window)) return () => {};
  const links = [...container.querySelectorAll("a[href]")].filter(
    (a) => internalTarget(a as HTMLAnchorElement) !== undefined,
  );
  const io = linkObserver();
  for (const a of links) io.observe(a);
  return () => {
    for (const a of links) io.unobserve(a);
  };
}

let hoverStarted = false;

export function startHoverPreload(): void {
  if (hoverStarted) return;
  hoverStarted = true;
  document.addEventListener("mouseover", (event) => {
    const anchor = (event.target as Element | null)?.closest?.("a");
    if (!anchor) return;
    const path = internalTarget(anchor);
    if (path !== undefined) prefetchPath(path);
  });
}

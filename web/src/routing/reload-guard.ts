// Guards the reload that follows a failed navigation: the page reloads at most once per path in
// a short window, so a chunk that stays broken shows an error instead of reloading forever.
import { storageKeys } from "../site-config.js";

export const RELOAD_WINDOW_MS = 30_000;

/** True when the page may reload for this path: not if it already did so moments ago. */
export function claimReload(path: string, storage: Pick<Storage, "getItem" | "setItem">, now = Date.now()): boolean {
  try {
    const previous = JSON.parse(storage.getItem(storageKeys.reloadedRoute) ?? "null") as {
      path: string;
      time: number;
    } | null;
    if (previous && previous.path === path && now - previous.time < RELOAD_WINDOW_MS) return false;
    storage.setItem(storageKeys.reloadedRoute, JSON.stringify({ path, time: now }));
    return true;
  } catch {
    // Without storage there is no way to know whether we reloaded already: do not risk a loop.
    return false;
  }
}

export function clearReload(storage: Pick<Storage, "removeItem">): void {
  try {
    storage.removeItem(storageKeys.reloadedRoute);
  } catch {
    // Storage may be unavailable; nothing to clean up then.
  }
}

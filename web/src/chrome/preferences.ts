// Reading and writing the reader's preferences in browser storage. Storage can be unavailable
// (private modes, blocked cookies); the site then works with defaults and forgets choices.
import { SITE_VERSION } from "../site-types.js";
import { storageKeys } from "../site-config.js";

function get(storage: () => Storage, key: string): string | null {
  try {
    return storage().getItem(key);
  } catch {
    return null;
  }
}

function set(storage: () => Storage, key: string, value: string): void {
  try {
    storage().setItem(key, value);
  } catch {
    // Not remembered; the choice still applies to this page view.
  }
}

const local = () => window.localStorage;
const session = () => window.sessionStorage;

export type Theme = "light" | "dark";

export function currentTheme(): Theme {
  return document.documentElement.getAttribute("data-theme") === "dark" ? "dark" : "light";
}

export function setTheme(theme: Theme): void {
  document.documentElement.setAttribute("data-theme", theme);
  set(local, storageKeys.theme, theme);
}

export function isAnnouncementDismissed(): boolean {
  return document.documentElement.getAttribute("data-announcement-dismissed") === "true";
}

export function dismissAnnouncement(): void {
  document.documentElement.setAttribute("data-announcement-dismissed", "true");
  set(local, storageKeys.announcementDismissed, "true");
}

/** Records the version being read. A stored version this site no longer has is replaced. */
export function rememberDocsVersion(version = SITE_VERSION): string {
  const stored = get(local, storageKeys.docsVersion);
  if (stored !== version) set(local, storageKeys.docsVersion, version);
  return version;
}

export function readToken(): string {
  return get(session, storageKeys.tryItToken) ?? "";
}

export function saveToken(token: string): void {
  set(session, storageKeys.tryItToken, token);
}

// The keys that open search: Ctrl/Cmd+K anywhere, and "/" when the reader is not typing.
export interface ShortcutEvent {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  target: EventTarget | null;
}

export function isSearchShortcut(event: ShortcutEvent): boolean {
  if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "k") return true;
  if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return false;
  const target = event.target as { closest?: (selector: string) => unknown } | null;
  const editable = target?.closest?.("input, textarea, select, [contenteditable=''], [contenteditable='true']");
  return !editable;
}

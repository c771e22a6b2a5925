import { describe, expect, it } from "vitest";
import { isSearchShortcut } from "./shortcut.js";

const key = (k: string, mods: { ctrlKey?: boolean; metaKey?: boolean; altKey?: boolean } = {}, editable = false) => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
  target: { closest: () => (editable ? {} : null) } as unknown as EventTarget,
});

describe("the search shortcut", () => {
  it("is Ctrl+K or Cmd+K, even while typing", () => {
    expect(isSearchShortcut(key("k", { ctrlKey: true }))).toBe(true);
    expect(isSearchShortcut(key("K", { metaKey: true }, true))).toBe(true);
    expect(isSearchShortcut(key("k", { ctrlKey: true, altKey: true }))).toBe(false);
    expect(isSearchShortcut(key("k"))).toBe(false);
  });

  it("is / outside text fields only", () => {
    expect(isSearchShortcut(key("/"))).toBe(true);
    expect(isSearchShortcut(key("/", {}, true))).toBe(false);
    expect(isSearchShortcut(key("/", { ctrlKey: true }))).toBe(false);
  });
});

import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createBootScript } from "./boot-script.js";
import { announcementId, storageKeys } from "./site-config.js";

function run(stored: Record<string, string>, storageThrows = false) {
  const attributes = new Map<string, string>();
  const data = new Map(Object.entries(stored));
  const localStorage = {
    getItem: (k: string) => {
      if (storageThrows) throw new Error("denied");
      return data.get(k) ?? null;
    },
    setItem: (k: string, v: string) => void data.set(k, v),
    removeItem: (k: string) => void data.delete(k),
  };
  const document = { documentElement: { setAttribute: (k: string, v: string) => attributes.set(k, v) } };
  runInNewContext(createBootScript(), { document, localStorage });
  return { attributes, data };
}

describe("the boot script", () => {
  it("applies light by default and the saved theme otherwise", () => {
    expect(run({}).attributes.get("data-theme")).toBe("light");
    expect(run({ [storageKeys.theme]: "dark" }).attributes.get("data-theme")).toBe("dark");
    expect(run({ [storageKeys.theme]: "purple" }).attributes.get("data-theme")).toBe("light");
  });

  it("hides a dismissed announcement until a new one replaces it", () => {
    const dismissed = { [storageKeys.announcementId]: announcementId, [storageKeys.announcementDismissed]: "true" };
    expect(run(dismissed).attributes.get("data-announcement-dismissed")).toBe("true");
    const old = run({ [storageKeys.announcementId]: "older", [storageKeys.announcementDismissed]: "true" });
    expect(old.attributes.has("data-announcement-dismissed")).toBe(false);
    expect(old.data.get(storageKeys.announcementId)).toBe(announcementId);
    expect(old.data.has(storageKeys.announcementDismissed)).toBe(false);
  });

  it("falls back to light when storage is unavailable", () => {
    expect(run({}, true).attributes.get("data-theme")).toBe("light");
  });
});

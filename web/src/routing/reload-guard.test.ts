import { describe, expect, it } from "vitest";
import { claimReload, clearReload, RELOAD_WINDOW_MS } from "./reload-guard.js";

function memoryStorage() {
  const data = new Map<string, string>();
  return {
    getItem: (k: string) => data.get(k) ?? null,
    setItem: (k: string, v: string) => void data.set(k, v),
    removeItem: (k: string) => void data.delete(k),
  };
}

describe("the reload guard", () => {
  it("allows one reload per path, not a second one right after", () => {
    const storage = memoryStorage();
    expect(claimReload("py/login", storage, 1000)).toBe(true);
    expect(claimReload("py/login", storage, 2000)).toBe(false);
    expect(claimReload("api/", storage, 2000)).toBe(true);
  });

  it("allows a reload again after the window or once a load succeeded", () => {
    const storage = memoryStorage();
    claimReload("py/login", storage, 0);
    expect(claimReload("py/login", storage, RELOAD_WINDOW_MS + 1)).toBe(true);
    clearReload(storage);
    expect(claimReload("py/login", storage, RELOAD_WINDOW_MS + 2)).toBe(true);
  });

  it("never reloads when storage fails, to rule out a loop", () => {
    const broken = {
      getItem: () => {
        throw new Error("denied");
      },
      setItem: () => {},
    };
    expect(claimReload("py/login", broken)).toBe(false);
  });
});

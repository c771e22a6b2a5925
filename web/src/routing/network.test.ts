import { describe, expect, it } from "vitest";
import { canPrefetch } from "./network.js";

describe("prefetching", () => {
  it("is on without network information and on fast connections", () => {
    expect(canPrefetch(undefined)).toBe(true);
    expect(canPrefetch({ effectiveType: "4g", saveData: false })).toBe(true);
    expect(canPrefetch({ effectiveType: "3g" })).toBe(true);
  });

  it("is off on 2g and slow-2g connections and with Save-Data", () => {
    expect(canPrefetch({ effectiveType: "2g" })).toBe(false);
    expect(canPrefetch({ effectiveType: "slow-2g" })).toBe(false);
    expect(canPrefetch({ effectiveType: "4g", saveData: true })).toBe(false);
  });
});

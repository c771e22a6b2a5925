import { describe, expect, it } from "vitest";
import { versionIdOf, versionSortKey } from "./version-order.js";

// Byte order, as the "C" collation of the version_key column compares.
const byKey = (a: string, b: string) => (versionSortKey(a) < versionSortKey(b) ? -1 : 1);

describe("versionSortKey", () => {
  it("orders by version number, not as text", () => {
    const ids = ["1.11.10", "1.11.4", "1.11.4.1", "2", "1.2", "1.11", "12", "1.11.3", "1.9.9", "1.11.0"];
    expect([...ids].sort(byKey)).toEqual([
      "1.2",
      "1.9.9",
      "1.11",
      "1.11.0",
      "1.11.3",
      "1.11.4",
      "1.11.4.1",
      "1.11.10",
      "2",
      "12",
    ]);
  });

  it("puts a pre-release before its release and after the version before", () => {
    const ids = ["1.10.3", "1.10.3-beta", "1.10.3-alpha", "1.10.2.9", "1.10.3.1"];
    expect([...ids].sort(byKey)).toEqual(["1.10.2.9", "1.10.3-alpha", "1.10.3-beta", "1.10.3", "1.10.3.1"]);
  });

  it("orders the real service's H2O versions", () => {
    const ids = ["3.36.1.5", "3.40.0.4", "3.38.0.4", "3.1.11.10", "3.1.11.4.1", "3.1.11.4"];
    expect([...ids].sort(byKey).reverse()).toEqual([
      "3.40.0.4",
      "3.38.0.4",
      "3.36.1.5",
      "3.1.11.10",
      "3.1.11.4.1",
      "3.1.11.4",
    ]);
  });

  it("gives different ids different keys", () => {
    const ids = ["1", "1.0", "1.0.0", "10", "1-0", "1.0-0", "100", "1.00-a"];
    expect(new Set(ids.map(versionSortKey)).size).toBe(ids.length);
  });
});

describe("versionIdOf", () => {
  it("takes the last segment of a name", () => {
    expect(versionIdOf("workspaces/global/daiEngineVersions/1.11.4")).toBe("1.11.4");
  });
});

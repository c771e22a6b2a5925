// The kit is consumed through its package exports; this keeps them resolvable.
import { describe, expect, it } from "vitest";

describe("@aiem/kit exports", () => {
  it.each(["aip", "authz", "config", "db", "events", "identity", "testing", "errors", "events/testing"])(
    "%s",
    async (entry) => {
      const mod: Record<string, unknown> = await import(`@aiem/kit/${entry}`);
      expect(Object.keys(mod).length).toBeGreaterThan(0);
    },
  );
});

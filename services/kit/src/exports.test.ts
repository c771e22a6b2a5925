// The kit is consumed through its package exports; this keeps them resolvable.
import { describe, expect, it } from "vitest";

const entries: Record<string, () => Promise<Record<string, unknown>>> = {
  aip: () => import("@aiem/kit/aip"),
  authz: () => import("@aiem/kit/authz"),
  config: () => import("@aiem/kit/config"),
  db: () => import("@aiem/kit/db"),
  events: () => import("@aiem/kit/events"),
  "events/testing": () => import("@aiem/kit/events/testing"),
  identity: () => import("@aiem/kit/identity"),
  testing: () => import("@aiem/kit/testing"),
  errors: () => import("@aiem/kit/errors"),
  server: () => import("@aiem/kit/server"),
  logger: () => import("@aiem/kit/logger"),
};

describe("@aiem/kit exports", () => {
  it.each(Object.keys(entries))("%s", async (entry) => {
    const mod = await entries[entry]!();
    expect(Object.keys(mod).length).toBeGreaterThan(0);
  });
});

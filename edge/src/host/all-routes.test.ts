// Every route of spec section 7 through REST on the all-in-one server. A route of a part that
// has landed must reach its service (any answer but UNIMPLEMENTED or "no route"); a route of a
// part that has not answers 501 with a Status body. The suite tightens as parts land.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { specRoutes } from "../../../proto/test/spec-routes.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";
import { smokeTest } from "../testing/smoke.js";
import { createModuleFactories, landedParts } from "./modules.js";

// `/v1/{name=workspaces/*/daiEngines/*}:pause` -> `/v1/workspaces/w1/daiEngines/x1:pause`
function concrete(template: string): string {
  return template.replace(/\{[a-z0-9_.]+(?:=([^}]*))?\}/g, (_, pattern: string | undefined) =>
    (pattern ?? "*").replace(/\*\*?/g, (__, i: number) => (i === 0 ? "w1" : "x1")),
  );
}

describe("every spec route through REST (all-in-one)", () => {
  let t: TestHost;
  let provided: Set<string>;
  beforeAll(async () => {
    t = await startTestHost({ modules: createModuleFactories() });
    provided = new Set(t.host.modules.flatMap((m) => m.services.map((s) => s.typeName)));
  });
  afterAll(() => t?.stop());

  it("passes the smoke test", async () => {
    await smokeTest(t.url, await t.token("alice", { admin: true }), landedParts);
  });

  it.each(specRoutes.map((r) => [`${r[0]} ${r[1]}`, r] as const))("%s", async (_, [verb, path, body, method]) => {
    const service = method.slice(0, method.lastIndexOf("."));
    const res = await t.call(verb, concrete(path), { user: "root", admin: true, ...(body ? { body: {} } : {}) });
    const text = await res.text();
    const status = JSON.parse(text.split("\n")[0]!) as { code?: number; message?: string };
    if (provided.has(service)) {
      expect(status.code, text).not.toBe(12);
      expect(status.message ?? "", text).not.toMatch(/^no route for/);
    } else {
      expect(res.status, text).toBe(501);
      expect(status, text).toMatchObject({ code: 12 });
    }
  });
});

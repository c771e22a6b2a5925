// The smoke test that the all-in-one server and the separate-process deployment both pass.
import { expect } from "vitest";
import type { PartName } from "../host/parts.js";

// One read per part, through REST, with what a landed part answers.
const probes: Record<PartName, { path: string; field: string }> = {
  catalogue: { path: "/v1/workspaces/global/daiEngineVersions", field: "daiEngineVersions" },
  engine: { path: "/v1/workspaces/default/daiEngines", field: "daiEngines" },
  sandbox: { path: "/v1/workspaces/default/sandboxEngines", field: "sandboxEngines" },
};

export async function smokeTest(baseUrl: string, token: string, landed: readonly PartName[]): Promise<void> {
  const health = await fetch(`${baseUrl}/healthz`);
  expect(health.status).toBe(200);
  const ready = await fetch(`${baseUrl}/readyz`);
  expect(ready.status, await ready.clone().text()).toBe(200);

  const anonymous = await fetch(`${baseUrl}${probes.catalogue.path}`);
  expect(anonymous.status).toBe(401);

  for (const [part, probe] of Object.entries(probes) as [PartName, (typeof probes)[PartName]][]) {
    const res = await fetch(`${baseUrl}${probe.path}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as Record<string, unknown>;
    if (landed.includes(part)) {
      expect(res.status, `${part}: ${JSON.stringify(body)}`).toBe(200);
      expect(body, part).toHaveProperty("nextPageToken");
    } else {
      expect(res.status, part).toBe(501);
      expect(body, part).toMatchObject({ code: 12 });
    }
  }
}

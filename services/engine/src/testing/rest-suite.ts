// Shared by the REST suites gathered in rest.test.ts: one host for all of them (each PGlite costs
// seconds), a standard catalogue, request bodies per engine kind, and status assertions.
import { expect } from "vitest";
import { ok, waitFor } from "@aiem/kit/testing";
import { catalogueFixture, freshId, type CallOptions, type EngineTestHost, type Reply, type Who } from "./index.js";

export const WS = "team-a";
const GiB = 1024 ** 3;

export type KindKey = "dai" | "h2o" | "notebook";
export const KINDS: readonly KindKey[] = ["dai", "h2o", "notebook"];

export interface KindInfo {
  readonly collection: "daiEngines" | "h2oEngines" | "notebookEngines";
  readonly idParam: string;
  readonly field: string;
  readonly resource: string;
  readonly plural: string;
  readonly profileKind: "daiEngineProfiles" | "h2oEngineProfiles" | "notebookEngineProfiles";
  readonly versionField: string;
  readonly versionJson: string;
}

export const K: Record<KindKey, KindInfo> = {
  dai: {
    collection: "daiEngines",
    idParam: "daiEngineId",
    field: "dai_engine",
    resource: "daiEngine",
    plural: "daiEngines",
    profileKind: "daiEngineProfiles",
    versionField: "dai_engine_version",
    versionJson: "daiEngineVersion",
  },
  h2o: {
    collection: "h2oEngines",
    idParam: "h2oEngineId",
    field: "h2o_engine",
    resource: "h2oEngine",
    plural: "h2oEngines",
    profileKind: "h2oEngineProfiles",
    versionField: "h2o_engine_version",
    versionJson: "h2oEngineVersion",
  },
  notebook: {
    collection: "notebookEngines",
    idParam: "notebookEngineId",
    field: "notebook_engine",
    resource: "notebookEngine",
    plural: "notebookEngines",
    profileKind: "notebookEngineProfiles",
    versionField: "notebook_image",
    versionJson: "notebookImage",
  },
};

export const std = {
  daiProfile: "workspaces/global/daiEngineProfiles/std",
  h2oProfile: "workspaces/global/h2oEngineProfiles/std",
  notebookProfile: "workspaces/global/notebookEngineProfiles/std",
  daiVersion: "workspaces/global/daiEngineVersions/1.10.6",
  daiLatest: "workspaces/global/daiEngineVersions/latest",
  h2oVersion: "workspaces/global/h2oEngineVersions/3.46.0",
  image: "workspaces/global/notebookEngineImages/jupyter",
};

const holder: { h?: EngineTestHost } = {};
export const setHost = (h: EngineTestHost | undefined) => {
  holder.h = h;
};
export function h(): EngineTestHost {
  if (!holder.h) throw new Error("the REST host has not started");
  return holder.h;
}

export const constraints = {
  cpuConstraint: { min: "1", max: "4", default: "1" },
  gpuConstraint: { min: "0", max: "2", default: "0" },
  memoryBytesConstraint: { min: String(GiB), max: String(8 * GiB), default: String(2 * GiB) },
  maxIdleDurationConstraint: { min: "0s", max: "86400s", default: "3600s" },
  maxRunningDurationConstraint: { min: "0s", max: "172800s", default: "28800s" },
};

/** A profile of `kind` in workspaces/global with the standard constraints plus `extra`. */
export async function profileFixture(kind: KindKey, id: string, extra: Record<string, unknown> = {}): Promise<string> {
  const body: Record<string, unknown> = { displayName: id, enabled: true, ...constraints };
  if (kind !== "h2o")
    body.storageBytesConstraint = { min: String(GiB), max: String(64 * GiB), default: String(16 * GiB) };
  if (kind === "h2o") body.nodeCountConstraint = { min: "1", max: "4", default: "1" };
  return (await catalogueFixture(h(), K[kind].profileKind, id, { ...body, ...extra })).name;
}

/** The standard catalogue every suite can use. */
export async function standardCatalogue(): Promise<void> {
  await Promise.all([profileFixture("dai", "std"), profileFixture("h2o", "std"), profileFixture("notebook", "std")]);
  for (const [id, deprecated] of [
    ["1.9.0", true],
    ["1.10.5", false],
    ["1.10.6", false],
  ] as const) {
    await catalogueFixture(h(), "daiEngineVersions", id, { image: `h2oai/dai:${id}`, deprecated });
  }
  await catalogueFixture(h(), "h2oEngineVersions", "3.44.0", { image: "h2oai/h2o:3.44.0" });
  await catalogueFixture(h(), "h2oEngineVersions", "3.46.0", { image: "h2oai/h2o:3.46.0" });
  await catalogueFixture(h(), "notebookEngineImages", "jupyter", {
    image: "jupyter/minimal:1",
    enabled: true,
    displayName: "Jupyter",
  });
  await catalogueFixture(h(), "notebookEngineImages", "off", { image: "jupyter/off:1", enabled: false });
  const r = await h().rest("POST", "/v1/workspaces/global/daiEngineVersions/1.10.6:assignAliases", {
    body: { aliases: ["latest"] },
  });
  expect(r.status, r.text).toBe(200);
  await h().syncCatalogue("daiEngineVersions", std.daiLatest);
}

/** A minimal create body of a kind, on the standard catalogue. */
export function bodyOf(kind: KindKey, extra: Record<string, unknown> = {}): Record<string, unknown> {
  switch (kind) {
    case "dai":
      return { profile: std.daiProfile, daiEngineVersion: std.daiVersion, ...extra };
    case "h2o":
      return { profile: std.h2oProfile, h2oEngineVersion: std.h2oVersion, ...extra };
    case "notebook":
      return { profile: std.notebookProfile, notebookImage: std.image, ...extra };
  }
}

export const nameOf = (kind: KindKey, id: string, ws = WS) => `workspaces/${ws}/${K[kind].collection}/${id}`;

export async function createEngine(
  kind: KindKey,
  o: { who?: Who; id?: string; body?: Record<string, unknown>; ws?: string; query?: string; roles?: string[] } = {},
): Promise<Reply & { name: string }> {
  const id = o.id ?? freshId(kind[0]);
  const q = `${K[kind].idParam}=${encodeURIComponent(id)}${o.query ? `&${o.query}` : ""}`;
  const options: CallOptions = {
    who: o.who ?? "alice",
    body: o.body ?? bodyOf(kind),
    ...(o.roles ? { roles: o.roles } : {}),
  };
  const r = await h().rest("POST", `/v1/workspaces/${o.ws ?? WS}/${K[kind].collection}?${q}`, options);
  return { ...r, name: nameOf(kind, id, o.ws ?? WS) };
}

/** Creates an engine, pauses it and waits until it is paused (updates need that); returns its name. */
export async function pausedEngine(kind: KindKey, o: Parameters<typeof createEngine>[1] = {}): Promise<string> {
  const r = await createEngine(kind, o);
  expect(r.status, r.text).toBe(200);
  const paused = await h().rest("POST", `/v1/${r.name}:pause`, { who: o.who ?? "alice", body: {} });
  expect(paused.status, paused.text).toBe(200);
  await h().waitForState(r.name, "STATE_PAUSED");
  return r.name;
}

/** Creates an engine and waits until it runs; returns its name. */
export async function runningEngine(kind: KindKey, o: Parameters<typeof createEngine>[1] = {}): Promise<string> {
  const r = await createEngine(kind, o);
  expect(r.status, r.text).toBe(200);
  await h().waitForState(r.name, "STATE_RUNNING");
  return r.name;
}

export { CODES, expectError, ok, resourceOf as res } from "@aiem/kit/testing";

export const post = (path: string, o: CallOptions = {}) => h().rest("POST", path, { body: {}, ...o });
export const get = (path: string, o: CallOptions = {}) => h().rest("GET", path, o);

/**
 * Deletes every engine of the host and waits until they are gone, so that one suite's engines do
 * not weigh on the next (each runs a process).
 */
export async function deleteAllEngines(): Promise<void> {
  h().runtime.releaseAll();
  const list = ok(await get("/v1/workspaces/-/engines?pageSize=1000"));
  await Promise.all(
    (list.engines ?? [])
      .filter((e: { state: string }) => e.state !== "STATE_DELETING")
      .map((e: { name: string }) => h().rest("DELETE", `/v1/${e.name}`)),
  );
  let left = 0;
  await waitFor(
    async () => {
      left = ok(await get("/v1/workspaces/-/engines?pageSize=1")).totalSize;
      return left === 0;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: () => `the engines to go (${left} still there)` },
  );
}

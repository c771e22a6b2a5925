// Catalogue fixtures made through the API, and fresh ids for them and for engines.
import type { RestJson } from "@aiem/kit/testing";
import type { EngineTestHost } from "./engine-test-host.js";

let counter = 0;
/** A fresh id for fixtures and engines. */
export function freshId(prefix = "e"): string {
  return `${prefix}${(++counter).toString(36)}${Math.random().toString(36).slice(2, 6)}`;
}

/** Creates a catalogue resource as the administrator and waits until the engine service sees it. */
export async function catalogueFixture(
  h: EngineTestHost,
  kind:
    | "daiEngineProfiles"
    | "h2oEngineProfiles"
    | "notebookEngineProfiles"
    | "daiEngineVersions"
    | "h2oEngineVersions"
    | "notebookEngineImages",
  id: string,
  body: Record<string, unknown>,
  workspace = "global",
): Promise<RestJson> {
  const idParam = {
    daiEngineProfiles: "daiEngineProfileId",
    h2oEngineProfiles: "h2oEngineProfileId",
    notebookEngineProfiles: "notebookEngineProfileId",
    daiEngineVersions: "daiEngineVersionId",
    h2oEngineVersions: "h2oEngineVersionId",
    notebookEngineImages: "notebookEngineImageId",
  }[kind];
  const r = await h.rest("POST", `/v1/workspaces/${workspace}/${kind}?${idParam}=${encodeURIComponent(id)}`, { body });
  if (r.status !== 200) throw new Error(`could not create ${kind}/${id}: ${r.text}`);
  const resource = Object.values(r.body)[0] as { name: string; updateTime: string };
  await h.syncCatalogue(kind, resource.name);
  return resource;
}

/** Changes a catalogue resource as the administrator and waits until the engine service sees it. */
export async function updateCatalogue(
  h: EngineTestHost,
  name: string,
  body: Record<string, unknown>,
  mask: string,
): Promise<RestJson> {
  const r = await h.rest("PATCH", `/v1/${name}?updateMask=${mask}`, { body });
  if (r.status !== 200) throw new Error(`could not update ${name}: ${r.text}`);
  const resource = Object.values(r.body)[0] as { name: string; updateTime: string };
  const kind = name.split("/")[2]!;
  await h.syncCatalogue(
    kind,
    resource.name,
    (x) =>
      x.updateTime &&
      new Date(Number(x.updateTime.seconds) * 1000 + x.updateTime.nanos / 1e6).toISOString() ===
        new Date(resource.updateTime).toISOString(),
  );
  return resource;
}

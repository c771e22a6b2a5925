// Lists of every catalogue kind: filter, order_by and page tokens through the kit.
import { beforeAll, describe, expect, it } from "vitest";
import { listAllPages, type RestJson } from "@aiem/kit/testing";
import { ALL_KINDS, type KindDescriptor } from "./kinds.js";
import { fieldTableOf } from "./store.js";
import { expectInvalid, kindApi, type KindApi, useCatalogueHarness } from "./testing.js";

const harness = useCatalogueHarness("lists");

const ws = "lists";
const GiB = 1024n ** 3n;
const N = 7;

function bodyOf(d: KindDescriptor, i: number): Record<string, unknown> {
  switch (d.family) {
    case "profile":
      return { displayName: i % 3 === 0 ? `Other ${i}` : `Item ${i}`, priority: i % 4, enabled: i % 2 === 0 };
    case "version":
      return { image: i % 2 ? `ghcr.io/acme/x:${i}` : `docker.io/x:${i}`, deprecated: i % 3 === 0 };
    case "image":
      return {
        image: `ghcr.io/acme/i:${i}`,
        displayName: `Image ${String.fromCharCode(90 - i)}`,
        enabled: i % 2 === 1,
      };
    case "template":
      return {
        memoryBytesLimit: BigInt(i + 1) * GiB,
        maxIdleDuration: { seconds: BigInt(300 * (i + 1)) },
        gpu: i % 3,
        displayName: `T${i}`,
      };
  }
}

const nanos = (r: RestJson) => r.createTime.seconds * 1_000_000_000n + BigInt(r.createTime.nanos);
const byName = (a: RestJson, b: RestJson) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
/** The version number of a version resource, as numbers. */
const numbers = (r: RestJson) =>
  (r.name as string)
    .slice(r.name.lastIndexOf("/") + 1)
    .split(".")
    .map(Number);
const byVersion = (a: RestJson, b: RestJson) => {
  const [x, y] = [numbers(a), numbers(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? -1) !== (y[i] ?? -1)) return (x[i] ?? -1) - (y[i] ?? -1);
  return 0;
};

/**
 * The default order, as the real service lists: profiles by priority then name; versions newest
 * version first; images and templates newest first (create_time desc, then name desc).
 */
function defaultOrder(d: KindDescriptor, rows: RestJson[]): RestJson[] {
  switch (d.family) {
    case "profile":
      return [...rows].sort((a, b) => a.priority - b.priority || byName(a, b));
    case "version":
      return [...rows].sort((a, b) => byVersion(b, a));
    default:
      return [...rows].sort((a, b) => (nanos(a) !== nanos(b) ? (nanos(a) > nanos(b) ? -1 : 1) : -byName(a, b)));
  }
}

// Version ids whose text order is not their numeric order (1.10.0 after 1.9.0).
const idOf = (d: KindDescriptor, i: number) => (d.family === "version" ? `1.${(i * 5) % 11}.0` : `item-${i}`);

/** Filters per family with the same predicate in JavaScript. */
const FILTERS: Record<string, Array<[string, (r: RestJson) => boolean]>> = {
  profile: [
    ["enabled = true AND priority < 2", (r) => r.enabled && r.priority < 2],
    ['display_name = "Item*"', (r) => r.displayName.startsWith("Item")],
    ['display_name : "her"', (r) => r.displayName.includes("her")],
    ["NOT enabled = true OR priority = 3", (r) => !r.enabled || r.priority === 3],
  ],
  version: [
    ['deprecated = false AND image = "ghcr.io/acme/*"', (r) => !r.deprecated && r.image.startsWith("ghcr.io/acme/")],
    ["deprecated = true", (r) => r.deprecated],
  ],
  image: [
    ["enabled = true", (r) => r.enabled],
    ['display_name > "Image W"', (r) => r.displayName > "Image W"],
  ],
  template: [
    ["memory_bytes_limit >= 4294967296", (r) => r.memoryBytesLimit >= 4n * GiB],
    ["max_idle_duration < 1200s AND gpu = 0", (r) => r.maxIdleDuration.seconds < 1200n && r.gpu === 0],
    ["enabled = false", (r) => !r.enabled],
  ],
};

describe.each(ALL_KINDS.map((d) => [d.kind, d] as const))("%s", (kind, d) => {
  // Every profile is for administrators to list; the rest any reader lists.
  const reader = d.family === "profile" ? "admin" : "viewer";
  let api: KindApi;
  const created: RestJson[] = [];

  beforeAll(async () => {
    api = kindApi(harness().as("admin"), d);
    for (let i = 0; i < N; i++) created.push(await api.create(ws, idOf(d, i), bodyOf(d, i)));
    // Another workspace's resources never show up.
    await api.create("lists-other", idOf(d, 0), bodyOf(d, 0));
  });

  async function all(req: Record<string, unknown>, pageSize: number): Promise<string[]> {
    const { items } = await listAllPages(async (pageToken) => {
      const page = await kindApi(harness().as(reader), d).list(ws, { ...req, pageSize, pageToken });
      expect(page.items.length).toBeLessThanOrEqual(pageSize === 0 ? 50 : Math.min(pageSize, 1000));
      return page;
    }, 50);
    return items.map((r) => r.name);
  }

  it("lists in the real service's order by default, page by page", async () => {
    const expected = defaultOrder(d, created).map((r) => r.name);
    expect(await all({}, 3)).toEqual(expected);
    expect(await all({}, 0)).toEqual(expected);
    expect(await all({}, 5000)).toEqual(expected);
  });

  it.each(FILTERS[d.family]!.map(([f, p]) => [f, p] as const))("filters with %s", async (filter, predicate) => {
    const expected = defaultOrder(d, created)
      .filter(predicate)
      .map((r) => r.name);
    expect(expected.length).toBeGreaterThan(0);
    expect(await all({ filter }, 2)).toEqual(expected);
  });

  it("filters on name with a wildcard and on create_time", async () => {
    expect(await all({ filter: `name = "workspaces/${ws}/${kind}/${idOf(d, 3)}"` }, 10)).toEqual([created[3].name]);
    const since = new Date(
      Number(created[4].createTime.seconds) * 1000 + created[4].createTime.nanos / 1e6,
    ).toISOString();
    const expected = defaultOrder(d, created).filter((r) => nanos(r) >= nanos(created[4]));
    expect(await all({ filter: `create_time >= "${since}"` }, 10)).toEqual(expected.map((r) => r.name));
  });

  it.each(Object.keys(fieldTableOf(d)).map((f) => [f]))(
    "sorts by %s in both directions, across pages",
    async (field) => {
      const asc = await all({ orderBy: field }, 2);
      const desc = await all({ orderBy: `${field} desc` }, 2);
      expect(asc).toHaveLength(N);
      expect(new Set(asc)).toEqual(new Set(created.map((r) => r.name)));
      if (field === "name") expect(asc).toEqual([...asc].sort());
      if (field === "version") expect(desc).toEqual(defaultOrder(d, created).map((r) => r.name));
      expect(desc).toHaveLength(N);
    },
  );

  it("rejects bad list arguments naming the field", async () => {
    const v = kindApi(harness().as(reader), d);
    const err = await expectInvalid(v.list(ws, { filter: "no_such_field = 1" }), "filter");
    expect(err.rawMessage).toContain("position");
    await expectInvalid(v.list(ws, { filter: "name = " }), "filter");
    await expectInvalid(v.list(ws, { orderBy: "creator" }), "order_by");
    await expectInvalid(v.list(ws, { orderBy: "name sideways" }), "order_by");
    await expectInvalid(v.list(ws, { pageSize: -1 }), "page_size");
    await expectInvalid(v.list(ws, { pageToken: "garbage" }), "page_token");
    const first = await v.list(ws, { pageSize: 1 });
    await expectInvalid(v.list(ws, { pageSize: 1, pageToken: first.nextPageToken, orderBy: "name" }), "page_token");
    await expectInvalid(v.list(ws, { pageSize: 1, pageToken: first.nextPageToken, filter: "name:*" }), "page_token");
    // A page token is also bound to the workspace and the collection.
    await expectInvalid(v.list("lists-other", { pageSize: 1, pageToken: first.nextPageToken }), "page_token");
    await expectInvalid(v.list("Bad Workspace"), "parent");
    await expectInvalid(v.list(ws, { filter: 'name = "a\u0000b"' }), "filter");
  });
});

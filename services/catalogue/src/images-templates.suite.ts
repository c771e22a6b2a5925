// Notebook and sandbox images and sandbox templates through Connect.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { descriptorOf } from "./kinds.js";
import { expectCode, expectInvalid, kindApi, type KindApi, useCatalogueHarness } from "./testing.js";

const harness = useCatalogueHarness("images");

const IMAGES = (["notebookEngineImages", "sandboxEngineImages"] as const).map(descriptorOf);
const ws = "team-a";

describe.each(IMAGES.map((d) => [d.kind, d] as const))("%s", (kind, d) => {
  const nameOf = (id: string) => `workspaces/${ws}/${kind}/${id}`;
  const admin = (): KindApi => kindApi(harness().as("admin"), d);

  it("creates with every field", async () => {
    const created = await admin().create(ws, "jupyter", {
      displayName: "Jupyter",
      image: "ghcr.io/acme/notebook:2024.1",
      enabled: true,
      imagePullPolicy: 2,
      imagePullSecrets: ["regcred"],
      updater: "users/mallory",
    });
    expect(created).toMatchObject({
      name: nameOf("jupyter"),
      displayName: "Jupyter",
      image: "ghcr.io/acme/notebook:2024.1",
      enabled: true,
      imagePullPolicy: 2,
      imagePullSecrets: ["regcred"],
      creator: "users/root",
      updater: "",
      updaterDisplayName: "",
    });
    expect(created.updateTime).toBeUndefined();
    expect(await admin().get(nameOf("jupyter"))).toEqual(created);
  });

  it("generates an id when none is given, from the display name when it has one", async () => {
    const a = await admin().create(ws, "", { displayName: "Python 3.12 (slim)", image: "python:3.12-slim" });
    expect(a.name).toMatch(new RegExp(`^workspaces/${ws}/${kind}/python-3-12-slim-[a-z0-9]{6}$`));
    const b = await admin().create(ws, "", { image: "python:3.12-slim" });
    expect(b.name).toMatch(new RegExp(`^workspaces/${ws}/${kind}/image-[a-z0-9]{6}$`));
    const c = await admin().create(ws, "", { displayName: "42 ünïcode!", image: "python:3.12-slim" });
    expect(c.name).toMatch(new RegExp(`^workspaces/${ws}/${kind}/unicode-[a-z0-9]{6}$`));
    expect((await admin().get(a.name)).name).toBe(a.name);
  });

  it.each([
    ["image", {}],
    ["image", { image: "bad image" }],
    ["display_name", { image: "x:1", displayName: "y".repeat(64) }],
    ["image_pull_policy", { image: "x:1", imagePullPolicy: -1 }],
    ["image_pull_secrets[1]", { image: "x:1", imagePullSecrets: ["ok", "Not ok"] }],
  ])("rejects a bad %s", async (field, body) => {
    await expectInvalid(admin().create(ws, "bad", body), `${d.resourceField}.${field}`);
    await expectInvalid(admin().create(ws, "", body), `${d.resourceField}.${field}`);
    await expectCode(admin().get(nameOf("bad")), Code.NotFound);
  });

  it("rejects a duplicate or malformed id", async () => {
    await admin().create(ws, "twice", { image: "x:1" });
    await expectCode(admin().create(ws, "twice", { image: "x:2" }), Code.AlreadyExists, nameOf("twice"));
    await expectInvalid(admin().create(ws, "Twice", { image: "x:2" }), d.idField);
  });

  it("updates every allowed path and nothing else", async () => {
    await admin().create(ws, "upd", { image: "x:1" });
    const updated = await admin().update(
      {
        name: nameOf("upd"),
        displayName: "New",
        image: "x:2",
        enabled: true,
        imagePullPolicy: 1,
        imagePullSecrets: ["s"],
      },
      ["*"],
    );
    expect(updated).toMatchObject({
      displayName: "New",
      image: "x:2",
      enabled: true,
      imagePullPolicy: 1,
      imagePullSecrets: ["s"],
    });
    const partial = await admin().update({ name: nameOf("upd"), displayName: "Only", image: "ignored:1" }, [
      "display_name",
    ]);
    expect(partial).toMatchObject({ displayName: "Only", image: "x:2" });
    await expectInvalid(admin().update({ name: nameOf("upd") }, ["deprecated"]), "update_mask");
    await expectInvalid(admin().update({ name: nameOf("upd"), image: "" }, ["image"]), `${d.resourceField}.image`);
  });

  it("deletes", async () => {
    await admin().create(ws, "del", { image: "x:1" });
    await admin().delete(nameOf("del"));
    await expectCode(admin().delete(nameOf("del")), Code.NotFound, nameOf("del"));
  });
});

describe("sandboxEngineTemplates", () => {
  const d = descriptorOf("sandboxEngineTemplates");
  const nameOf = (id: string) => `workspaces/${ws}/sandboxEngineTemplates/${id}`;
  const admin = (): KindApi => kindApi(harness().as("admin"), d);
  const GiB = 1024n ** 3n;
  const minimal = { memoryBytesLimit: 2n * GiB, maxIdleDuration: { seconds: 600n } };

  it("creates with every field", async () => {
    const body = {
      displayName: "Large",
      milliCpuRequest: 500,
      milliCpuLimit: 4000,
      gpuResource: "nvidia.com/gpu",
      gpu: 1,
      memoryBytesRequest: GiB,
      memoryBytesLimit: 8n * GiB,
      storageBytes: 20n * GiB,
      storageClassName: "fast",
      environmentalVariables: { PATH_EXTRA: "/opt/bin", _X1: "y" },
      yamlPodTemplateSpec: "spec:\n  priorityClassName: low\n",
      enabled: true,
      maxIdleDuration: { seconds: 1800n, nanos: 500_000_000 },
      maxRunningDuration: { seconds: 7200n },
    };
    const created = await admin().create(ws, "large", body);
    expect(created).toMatchObject({ ...body, name: nameOf("large"), creator: "users/root" });
    expect(await admin().get(nameOf("large"))).toEqual(created);
  });

  it("defaults requests to their limits, also after a limit changes", async () => {
    const created = await admin().create(ws, "defaults", { ...minimal, milliCpuLimit: 1000 });
    expect(created.milliCpuRequest).toBe(1000);
    expect(created.memoryBytesRequest).toBe(2n * GiB);
    const updated = await admin().update(
      { name: nameOf("defaults"), milliCpuLimit: 2000, memoryBytesLimit: 3n * GiB },
      ["milli_cpu_limit", "memory_bytes_limit"],
    );
    expect(updated.milliCpuRequest).toBe(2000);
    expect(updated.memoryBytesRequest).toBe(3n * GiB);
    // No cpu limit: no cpu request either; both show as 0, as does no storage quota.
    const unlimited = await admin().create(ws, "no-cpu-limit", minimal);
    expect(unlimited).toMatchObject({ milliCpuLimit: 0, milliCpuRequest: 0, storageBytes: 0n });
  });

  it("reads 0 as unset for the optional numbers, as the official client sends them", async () => {
    const zeros = { milliCpuRequest: 0, milliCpuLimit: 0, memoryBytesRequest: 0n, storageBytes: 0n };
    const created = await admin().create(ws, "zeros", { ...minimal, ...zeros });
    expect(created).toMatchObject({
      milliCpuLimit: 0,
      milliCpuRequest: 0,
      memoryBytesRequest: 2n * GiB,
      storageBytes: 0n,
    });
    // Stored as unset: a later limit is followed by the request.
    const limited = await admin().update({ name: nameOf("zeros"), ...minimal, ...zeros, milliCpuLimit: 1500 }, ["*"]);
    expect(limited).toMatchObject({ milliCpuLimit: 1500, milliCpuRequest: 1500 });
  });

  it("defaults max_running_duration to 8h; 0s means no limit for it and for max_idle_duration", async () => {
    const created = await admin().create(ws, "running-default", minimal);
    expect(created.maxRunningDuration).toEqual(expect.objectContaining({ seconds: 28800n }));
    const unlimited = await admin().create(ws, "running-none", {
      memoryBytesLimit: GiB,
      maxIdleDuration: { seconds: 0n },
      maxRunningDuration: { seconds: 0n },
    });
    expect(unlimited.maxRunningDuration).toEqual(expect.objectContaining({ seconds: 0n }));
    expect(unlimited.maxIdleDuration).toEqual(expect.objectContaining({ seconds: 0n }));
    const changed = await admin().update({ name: nameOf("running-default"), maxRunningDuration: { seconds: 60n } }, [
      "max_running_duration",
    ]);
    expect(changed.maxRunningDuration).toEqual(expect.objectContaining({ seconds: 60n }));
    // Named in the mask but left out of the body: back to the default.
    const cleared = await admin().update({ name: nameOf("running-default") }, ["max_running_duration"]);
    expect(cleared.maxRunningDuration).toEqual(expect.objectContaining({ seconds: 28800n }));
  });

  it("unsets an optional field named in the mask but left out of the body", async () => {
    await admin().create(ws, "unset", { ...minimal, storageBytes: GiB, milliCpuRequest: 100, milliCpuLimit: 200 });
    const updated = await admin().update({ name: nameOf("unset") }, ["storage_bytes", "milli_cpu_request"]);
    expect(updated.storageBytes).toBe(0n);
    expect(updated.milliCpuRequest).toBe(200);
  });

  it.each([
    ["memory_bytes_limit", { maxIdleDuration: { seconds: 60n } }],
    ["memory_bytes_limit", { memoryBytesLimit: -1n, maxIdleDuration: { seconds: 60n } }],
    ["max_idle_duration", { memoryBytesLimit: GiB }],
    ["max_idle_duration", { ...minimal, maxIdleDuration: { seconds: -1n } }],
    ["max_running_duration", { ...minimal, maxRunningDuration: { seconds: -1n } }],
    ["max_running_duration", { ...minimal, maxRunningDuration: { seconds: 1n, nanos: -5 } }],
    ["milli_cpu_request", { ...minimal, milliCpuRequest: 2000, milliCpuLimit: 1000 }],
    ["milli_cpu_request", { ...minimal, milliCpuRequest: -1 }],
    ["milli_cpu_limit", { ...minimal, milliCpuLimit: -5 }],
    ["memory_bytes_request", { ...minimal, memoryBytesRequest: 3n * GiB }],
    ["memory_bytes_request", { ...minimal, memoryBytesRequest: -1n }],
    ["gpu", { ...minimal, gpu: -1 }],
    ["storage_bytes", { ...minimal, storageBytes: -1n }],
    ["display_name", { ...minimal, displayName: "z".repeat(64) }],
    ['environmental_variables["1BAD"]', { ...minimal, environmentalVariables: { "1BAD": "x" } }],
    ['environmental_variables["A-B"]', { ...minimal, environmentalVariables: { "A-B": "x" } }],
    ["yaml_pod_template_spec", { ...minimal, yamlPodTemplateSpec: "[1, 2]" }],
  ])("rejects a bad %s", async (field, body) => {
    await expectInvalid(admin().create(ws, "bad", body), `sandbox_engine_template.${field}`);
    await expectCode(admin().get(nameOf("bad")), Code.NotFound);
  });

  it("counts 1000 millicpu as one core: a request of exactly the limit is fine", async () => {
    const created = await admin().create(ws, "one-core", { ...minimal, milliCpuRequest: 1000, milliCpuLimit: 1000 });
    expect(created).toMatchObject({ milliCpuRequest: 1000, milliCpuLimit: 1000 });
  });

  it("generates an id when none is given", async () => {
    const created = await admin().create(ws, "", { ...minimal, displayName: "Tiny" });
    expect(created.name).toMatch(/^workspaces\/team-a\/sandboxEngineTemplates\/tiny-[a-z0-9]{6}$/);
  });

  it.each(d.updatable.map((p) => [p]))("accepts the update path %s", async (path) => {
    const id = `p-${path.replace(/_/g, "-")}`;
    await admin().create(ws, id, minimal);
    const body: Record<string, unknown> = { name: nameOf(id), ...minimal };
    await admin().update(body, [path]);
  });

  it("rejects changes that break the request/limit rule, naming the field", async () => {
    await admin().create(ws, "rules", { ...minimal, memoryBytesRequest: GiB });
    await expectInvalid(
      admin().update({ name: nameOf("rules"), memoryBytesLimit: GiB / 2n }, ["memory_bytes_limit"]),
      "sandbox_engine_template.memory_bytes_request",
    );
    await expectInvalid(
      admin().update({ name: nameOf("rules") }, ["max_idle_duration"]),
      "sandbox_engine_template.max_idle_duration",
    );
    await expectInvalid(
      admin().update({ name: nameOf("rules") }, ["memory_bytes_limit"]),
      "sandbox_engine_template.memory_bytes_limit",
    );
  });
});

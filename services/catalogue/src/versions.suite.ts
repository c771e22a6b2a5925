// DAI and H2O versions through Connect: semver ids, image, pull settings, and aliases.
import { Code } from "@connectrpc/connect";
import type { RestJson } from "@aiem/kit/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { descriptorOf } from "./kinds.js";
import { expectCode, expectInvalid, kindApi, type KindApi, useCatalogueHarness } from "./testing.js";

const harness = useCatalogueHarness("versions");

const VERSIONS = (["daiEngineVersions", "h2oEngineVersions"] as const).map(descriptorOf);

describe.each(VERSIONS.map((d) => [d.kind, d] as const))("%s", (kind, d) => {
  const ws = "team-a";
  const nameOf = (id: string, workspace = ws) => `workspaces/${workspace}/${kind}/${id}`;
  const admin = (): KindApi => kindApi(harness().as("admin"), d);
  const image = (tag: string) => ({ image: `ghcr.io/acme/engine:${tag}` });

  it("creates a version with image, pull policy, pull secrets and aliases", async () => {
    const created = await admin().create(ws, "1.10.3", {
      ...image("1.10.3"),
      deprecated: true,
      imagePullPolicy: 1,
      imagePullSecrets: ["regcred", "backup.cred"],
      aliases: ["lts-1", "lts", "lts-1"],
      creator: "users/mallory",
    });
    expect(created).toMatchObject({
      name: nameOf("1.10.3"),
      deprecated: true,
      image: "ghcr.io/acme/engine:1.10.3",
      imagePullPolicy: 1,
      imagePullSecrets: ["regcred", "backup.cred"],
      aliases: ["lts", "lts-1"],
      creator: "users/root",
      updater: "",
      updaterDisplayName: "",
    });
    expect(created.updateTime).toBeUndefined();
    expect((await admin().get(nameOf("lts"))).name).toBe(nameOf("1.10.3"));
  });

  it("reads IMAGE_PULL_POLICY_IF_NOT_PRESENT when created without a pull policy", async () => {
    const created = await admin().create(ws, "1.10.4", image("1.10.4"));
    expect(created.imagePullPolicy).toBe(3);
    expect((await admin().get(nameOf("1.10.4"))).imagePullPolicy).toBe(3);
  });

  // The official Python client sends aliases on create (its version configs declare them), and
  // its docs call them optional there: they are taken as :assignAliases would take them.
  it("moves an alias given on create from the version that held it, and checks aliases with the rest", async () => {
    const aws = `create-aliases-${kind.slice(0, 3)}`;
    await admin().create(aws, "1.0.0", { ...image("1.0.0"), aliases: ["latest", "stable"] });
    const newer = await admin().create(aws, "1.1.0", { ...image("1.1.0"), aliases: ["latest"] });
    expect(newer.aliases).toEqual(["latest"]);
    expect((await admin().get(nameOf("latest", aws))).name).toBe(nameOf("1.1.0", aws));
    const older = await admin().get(nameOf("1.0.0", aws));
    expect(older.aliases).toEqual(["stable"]);
    expect(older.updater).toBe("users/root");
    const err = await expectInvalid(
      admin().create(aws, "1.2.0", { image: "", aliases: ["ok", "Bad"] }),
      `${d.resourceField}.aliases[1]`,
    );
    expect(err.rawMessage).toContain(`${d.resourceField}.image: `);
    await expectCode(admin().get(nameOf("1.2.0", aws)), Code.NotFound);
    expect((await admin().get(nameOf("latest", aws))).name).toBe(nameOf("1.1.0", aws));
  });

  it.each(["1", "12", "1.10", "1.10.3.1", "1.10.3-alpha", "1.10.3-rc.1", "10.20.30.40.50", `1.2.${"3".repeat(59)}`])(
    "accepts the version id %s",
    async (id) => {
      expect((await admin().create(ws, id, image("x"))).name).toBe(nameOf(id));
    },
  );

  it.each([
    ["", "is required"],
    ["1.", "dot-separated numbers"],
    ["latest", "dot-separated numbers"],
    ["v1.2.3", "dot-separated numbers"],
    ["01.2.3", "dot-separated numbers"],
    ["1.2.3+build", "dot-separated numbers"],
    [`1.2.${"3".repeat(60)}`, "at most 63"],
  ])("rejects the version id %j", async (id, text) => {
    const err = await expectInvalid(admin().create(ws, id, image("x")), d.idField);
    expect(err.rawMessage).toContain(text);
  });

  it.each([
    ["image", {}],
    ["image", { image: "has space:1" }],
    ["image_pull_policy", { ...image("1"), imagePullPolicy: 9 }],
    ["image_pull_secrets[0]", { ...image("1"), imagePullSecrets: ["Bad_Name"] }],
  ])("rejects a bad %s", async (field, body) => {
    await expectInvalid(admin().create(ws, "9.9.9", body), `${d.resourceField}.${field}`);
    await expectCode(admin().get(nameOf("9.9.9")), Code.NotFound);
  });

  it("rejects a duplicate id", async () => {
    await admin().create(ws, "2.0.0", image("2"));
    await expectCode(admin().create(ws, "2.0.0", image("2b")), Code.AlreadyExists, nameOf("2.0.0"));
  });

  it("updates deprecated, image, pull policy and secrets; aliases are not a path", async () => {
    await admin().create(ws, "3.0.0", image("3"));
    const updated = await admin().update(
      {
        name: nameOf("3.0.0"),
        deprecated: true,
        image: "ghcr.io/acme/engine:3-fixed",
        imagePullPolicy: 3,
        imagePullSecrets: ["a"],
      },
      ["*"],
    );
    expect(updated).toMatchObject({
      deprecated: true,
      image: "ghcr.io/acme/engine:3-fixed",
      imagePullPolicy: 3,
      imagePullSecrets: ["a"],
    });
    const err = await expectInvalid(
      admin().update({ name: nameOf("3.0.0"), aliases: ["x"] }, ["aliases"]),
      "update_mask",
    );
    expect(err.rawMessage).toContain(":assignAliases");
    // With "*" the aliases in the body are not applied.
    const star = await admin().update({ name: nameOf("3.0.0"), image: "ghcr.io/acme/engine:3", aliases: ["sneaky"] }, [
      "*",
    ]);
    expect(star.aliases).toEqual([]);
    await expectInvalid(admin().update({ name: nameOf("3.0.0"), image: "" }, ["image"]), `${d.resourceField}.image`);
    await expectInvalid(admin().update({ name: nameOf("3.0.0") }, ["display_name"]), "update_mask");
  });

  it("lists newest version first, by number, and answers alias assignments in that order", async () => {
    const ows = `order-${kind.slice(0, 3)}`;
    // Created out of order; as text "1.11.10" < "1.11.4" < "1.9.0".
    for (const id of ["1.11.4", "1.9.0", "1.11.10", "1.11.4.1", "2", "1.11.3"])
      await admin().create(ows, id, image(id));
    const newestFirst = ["2", "1.11.10", "1.11.4.1", "1.11.4", "1.11.3", "1.9.0"].map((id) => nameOf(id, ows));
    const member = kindApi(harness().as("member"), d);
    expect((await member.list(ows)).items.map((v) => v.name)).toEqual(newestFirst);
    expect((await member.list(ows, { orderBy: "version" })).items.map((v) => v.name)).toEqual(
      [...newestFirst].reverse(),
    );
    await expectInvalid(member.list(ows, { filter: 'version = "2"' }), "filter");
    // A page token carries on after the versions of the previous page, even once one is deleted.
    const first = await member.list(ows, { pageSize: 2 });
    expect(first.items.map((v) => v.name)).toEqual(newestFirst.slice(0, 2));
    await admin().delete(newestFirst[2]!);
    const rest = await member.list(ows, { pageSize: 10, pageToken: first.nextPageToken });
    expect(rest.items.map((v) => v.name)).toEqual(newestFirst.slice(3));
    expect(rest.nextPageToken).toBe("");
    const all = await admin().assignAliases(nameOf("1.9.0", ows), ["oldest"]);
    expect(all.map((v) => v.name)).toEqual(newestFirst.filter((_, i) => i !== 2));
  });

  describe("aliases", () => {
    const aws = `aliases-${kind.slice(0, 3)}`;
    const vname = (id: string) => nameOf(id, aws);
    const aliasesOf = (all: RestJson[]) => Object.fromEntries(all.map((v) => [v.name.split("/").pop(), v.aliases]));

    beforeAll(async () => {
      for (const id of ["1.0.0", "1.1.0", "1.2.0"]) await admin().create(aws, id, image(id));
      await admin().create("aliases-elsewhere", "1.0.0", image("other"));
    });

    it("assigns, replaces and moves aliases within the workspace only", async () => {
      let all = await admin().assignAliases(vname("1.0.0"), ["latest", "stable"]);
      expect(aliasesOf(all)).toEqual({ "1.0.0": ["latest", "stable"], "1.1.0": [], "1.2.0": [] });
      await admin().assignAliases(`workspaces/aliases-elsewhere/${kind}/1.0.0`, ["latest"]);

      all = await admin().assignAliases(vname("1.1.0"), ["latest", "beta"]);
      expect(aliasesOf(all)).toEqual({ "1.0.0": ["stable"], "1.1.0": ["beta", "latest"], "1.2.0": [] });
      // Replacing: the old aliases of the version are gone.
      all = await admin().assignAliases(vname("1.1.0"), ["latest"]);
      expect(aliasesOf(all)).toEqual({ "1.0.0": ["stable"], "1.1.0": ["latest"], "1.2.0": [] });
      // The other workspace kept its own "latest".
      expect((await admin().get(`workspaces/aliases-elsewhere/${kind}/latest`)).name).toBe(
        `workspaces/aliases-elsewhere/${kind}/1.0.0`,
      );
    });

    it("lets an alias stand in for the id in get, update, assignAliases and delete", async () => {
      await admin().assignAliases(vname("1.2.0"), ["edge"]);
      const got = await kindApi(harness().as("stranger"), d).get(vname("edge"));
      expect(got.name).toBe(vname("1.2.0"));
      expect(got.aliases).toEqual(["edge"]);
      const updated = await admin().update({ name: vname("edge"), deprecated: true }, ["deprecated"]);
      expect(updated.name).toBe(vname("1.2.0"));
      expect(updated.deprecated).toBe(true);
      const all = await admin().assignAliases(vname("edge"), ["edge", "nightly"]);
      expect(aliasesOf(all)["1.2.0"]).toEqual(["edge", "nightly"]);
      await admin().delete(vname("nightly"));
      await expectCode(admin().get(vname("1.2.0")), Code.NotFound);
      await expectCode(admin().get(vname("edge")), Code.NotFound, vname("edge"));
      // The alias is free again.
      await admin().create(aws, "1.2.1", image("1.2.1"));
      await admin().assignAliases(vname("1.2.1"), ["edge"]);
      expect((await admin().get(vname("edge"))).name).toBe(vname("1.2.1"));
    });

    it("clears every alias with an empty list", async () => {
      await admin().create(aws, "5.0.0", image("5"));
      await admin().assignAliases(vname("5.0.0"), ["five", "v5"]);
      const all = await admin().assignAliases(vname("5.0.0"), []);
      expect(aliasesOf(all)["5.0.0"]).toEqual([]);
      await expectCode(admin().get(vname("five")), Code.NotFound);
    });

    it("answers the aliases sorted, without repeats", async () => {
      await admin().create(aws, "6.0.0", image("6"));
      const all = await admin().assignAliases(vname("6.0.0"), ["zeta", "alpha", "zeta"]);
      expect(aliasesOf(all)["6.0.0"]).toEqual(["alpha", "zeta"]);
    });

    it.each([
      ["aliases[1]", ["ok", "Bad"]],
      ["aliases[0]", ["1.2.3"]],
      ["aliases[0]", ["a".repeat(64)]],
      ["aliases[0]", [""]],
      ["aliases[0]", ["ends-"]],
    ])("rejects a bad alias naming %s, and changes nothing", async (field, aliases) => {
      const before = await admin().get(vname("1.0.0"));
      await expectInvalid(admin().assignAliases(vname("1.0.0"), aliases), field);
      expect(await admin().get(vname("1.0.0"))).toEqual(before);
    });

    it("answers NOT_FOUND for a missing version or alias", async () => {
      await expectCode(admin().assignAliases(vname("7.7.7"), ["x"]), Code.NotFound, vname("7.7.7"));
      await expectCode(admin().assignAliases(vname("no-such-alias"), ["x"]), Code.NotFound, vname("no-such-alias"));
      await expectInvalid(admin().assignAliases(`workspaces/${aws}/${kind}/Not_Valid`, ["x"]), "name");
    });
  });
});

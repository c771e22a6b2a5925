import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { useTempDir } from "../testing/temp-dirs.js";
import type { Principal } from "../identity/principal.js";
import {
  Action,
  ACTIONS,
  CatalogueKind,
  Kind,
  KINDS,
  permissionName,
  WorkspaceKind,
  type Kind as KindT,
} from "./permissions.js";
import { createPolicy, embeddedPolicy, parsePolicy, PolicyError, type Policy } from "./policy.js";

const user = (sub: string, admin = false): Principal => ({
  name: `users/${sub}`,
  subject: sub,
  displayName: sub,
  roles: [],
  admin,
});

const root = user("root");
const minted = user("boss", true);
const alice = user("alice");
const carol = user("carol");
const dave = user("dave");

const POLICY = `
admins: [users/root]
workspaces:
  team-a: { members: [users/alice, users/bob], viewers: [users/carol] }
  team-b: { viewers: [users/alice] }
  open: { viewers: ["users/*"] }
`;

const WORKSPACE_KINDS = Object.values(WorkspaceKind);
const CATALOGUE_KINDS = Object.values(CatalogueKind);
const READS: Action[] = [Action.GET, Action.LIST, Action.LIST_ASSIGNED];
const WRITES = ACTIONS.filter((a) => !READS.includes(a));
const MEMBER_ACTIONS = ACTIONS.filter((a) => a !== Action.MIGRATE_CREATOR && a !== Action.LIST_ALL);

type Row = [
  who: string,
  principal: Principal,
  workspace: string,
  kinds: readonly KindT[],
  actions: readonly Action[],
  allowed: boolean,
];

/** Every (kind, action) pair a row covers must get the row's answer. */
const fileRows: Row[] = [
  ["policy admin", root, "team-a", KINDS, ACTIONS, true],
  ["policy admin", root, "-", [Kind.engines], [Action.LIST_ALL], true],
  ["policy admin", root, "unlisted", KINDS, ACTIONS, true],
  ["minted admin", minted, "team-a", KINDS, ACTIONS, true],
  ["member", alice, "team-a", WORKSPACE_KINDS, MEMBER_ACTIONS, true],
  ["member", alice, "team-a", WORKSPACE_KINDS, [Action.MIGRATE_CREATOR, Action.LIST_ALL], false],
  ["member", alice, "-", [Kind.engines], [Action.LIST_ALL, Action.LIST], false],
  ["member", alice, "team-a", CATALOGUE_KINDS, READS, true],
  ["member", alice, "team-a", CATALOGUE_KINDS, WRITES, false],
  ["member elsewhere viewer", alice, "team-b", WORKSPACE_KINDS, READS, true],
  ["member elsewhere viewer", alice, "team-b", WORKSPACE_KINDS, WRITES, false],
  ["viewer", carol, "team-a", WORKSPACE_KINDS, READS, true],
  ["viewer", carol, "team-a", WORKSPACE_KINDS, WRITES, false],
  ["viewer", carol, "team-a", CATALOGUE_KINDS, WRITES, false],
  ["stranger", dave, "team-a", WORKSPACE_KINDS, ACTIONS, false],
  ["stranger", dave, "global", CATALOGUE_KINDS, READS, true],
  ["stranger", dave, "global", CATALOGUE_KINDS, WRITES, false],
  ["everyone viewer", dave, "open", WORKSPACE_KINDS, READS, true],
  ["everyone viewer", dave, "open", WORKSPACE_KINDS, WRITES, false],
];

const embeddedRows: Row[] = [
  ["anyone", alice, "any-workspace", WORKSPACE_KINDS, MEMBER_ACTIONS, true],
  ["anyone", alice, "global", WORKSPACE_KINDS, [Action.MIGRATE_CREATOR, Action.LIST_ALL], false],
  ["anyone", alice, "-", [Kind.engines], [Action.LIST_ALL], false],
  ["anyone", alice, "global", CATALOGUE_KINDS, READS, true],
  ["anyone", alice, "global", CATALOGUE_KINDS, WRITES, false],
  ["minted admin", minted, "global", KINDS, ACTIONS, true],
  ["minted admin", minted, "-", [Kind.engines], [Action.LIST_ALL], true],
  ["not an admin without a file", root, "global", CATALOGUE_KINDS, [Action.CREATE], false],
];

function describeList(items: readonly string[], all: readonly string[], allLabel: string): string {
  if (items === all) return allLabel;
  if (items === WORKSPACE_KINDS) return "workspace kinds";
  if (items === CATALOGUE_KINDS) return "catalogue kinds";
  if (items === READS) return "reads";
  if (items === WRITES) return "writes";
  if (items === MEMBER_ACTIONS) return "member actions";
  return items.join(",");
}

function runTable(name: string, policy: () => Policy, rows: Row[]) {
  describe(name, () => {
    const cases = rows.map((row) => ({
      label: `${row[0]}: ${describeList(row[4], ACTIONS, "all actions")} on ${describeList(row[3], KINDS, "all kinds")} in ${row[2]} -> ${row[5] ? "allowed" : "denied"}`,
      row,
    }));
    it.each(cases)("$label", ({ row: [, principal, workspace, kinds, actions, allowed] }) => {
      // Collect every (kind, action) that disagrees, so a failure lists them all.
      const wrong = kinds.flatMap((kind) =>
        actions.flatMap((action) =>
          [workspace, `workspaces/${workspace}`]
            .filter((ws) => policy().allows(principal, action, kind, ws) !== allowed)
            .map((ws) => `${permissionName(kind, action)} on ${ws}`),
        ),
      );
      expect(wrong, `expected allowed=${allowed}`).toEqual([]);
    });
  });
}

const filePolicy = parsePolicy(POLICY, "policy.yaml");
runTable("policy file", () => filePolicy, fileRows);
runTable("embedded default", embeddedPolicy, embeddedRows);

describe("policy", () => {
  it("names permissions as spec section 6 does", () => {
    expect(permissionName(Kind.daiEngines, Action.UPGRADE_DAI_ENGINE_VERSION)).toBe(
      "actions/enginemanager/daiEngines/UPGRADE_DAI_ENGINE_VERSION",
    );
    expect(ACTIONS).toHaveLength(16);
  });

  it("check() throws PERMISSION_DENIED naming the permission and workspace", () => {
    let error: unknown;
    try {
      filePolicy.check(carol, Action.CREATE, Kind.daiEngines, "workspaces/team-a");
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.PermissionDenied);
    expect((error as ConnectError).rawMessage).toBe(
      "permission denied: users/carol lacks actions/enginemanager/daiEngines/CREATE on workspaces/team-a",
    );
    expect(() => filePolicy.check(alice, Action.CREATE, Kind.daiEngines, "team-a")).not.toThrow();
  });

  it("reports roles", () => {
    expect(filePolicy.role(root, "x")).toBe("admin");
    expect(filePolicy.role(alice, "team-a")).toBe("member");
    expect(filePolicy.role(carol, "workspaces/team-a")).toBe("viewer");
    expect(filePolicy.role(dave, "team-a")).toBeUndefined();
    expect(embeddedPolicy().role(dave, "team-a")).toBe("member");
    expect(filePolicy.isAdmin(root)).toBe(true);
    expect([...filePolicy.admins]).toEqual(["users/root"]);
  });

  it("reads JSON too", () => {
    const policy = parsePolicy(
      JSON.stringify({ admins: ["users/root"], workspaces: { w: { members: ["users/x"] } } }),
      "p.json",
    );
    expect(policy.allows(user("x"), Action.CREATE, Kind.notebookEngines, "w")).toBe(true);
  });

  it.each([
    ["admins: users/root", /policy file bad\.yaml: admins: must be a list/],
    ["admins: [root]", /policy file bad\.yaml: admins\[0\]: "root" is not a principal/],
    ['admins: ["users/*"]', /admins: users\/\* may not be an administrator/],
    ["owners: []", /policy file bad\.yaml: owners: unknown key/],
    ["workspaces: [a]", /workspaces: must be a mapping/],
    ["workspaces:\n  team-a:\n    editors: [users/a]", /workspaces\.team-a\.editors: unknown key/],
    ["workspaces:\n  team-a:\n    members: [users/a, 3]", /workspaces\.team-a\.members\[1\]: 3 is not a principal/],
    ["workspaces:\n  '-':\n    members: [users/a]", /workspaces\.-: is not a valid workspace id/],
    ["admins: [users/a\n", /policy file bad\.yaml: not valid YAML or JSON/],
    ["- a\n- b", /policy file bad\.yaml: top level: must be a mapping/],
  ])("rejects %j", (text, message) => {
    expect(() => parsePolicy(text, "bad.yaml")).toThrow(PolicyError);
    expect(() => parsePolicy(text, "bad.yaml")).toThrow(message);
  });

  it("treats an empty file as a policy with nobody in it", () => {
    const policy = parsePolicy("", "empty.yaml");
    expect(policy.allows(alice, Action.GET, Kind.daiEngines, "team-a")).toBe(false);
    expect(policy.allows(alice, Action.GET, Kind.daiEngineProfiles, "global")).toBe(true);
  });

  describe("createPolicy", () => {
    const dir = useTempDir("aiem-policy-");

    it("reads the file once", async () => {
      const file = path.join(dir(), "policy.yaml");
      await writeFile(file, POLICY);
      const policy = await createPolicy(file);
      expect(policy.source).toBe(file);
      await writeFile(file, "admins: []");
      expect(policy.isAdmin(root)).toBe(true);
    });

    it("names a missing file", async () => {
      const file = path.join(dir(), "missing.yaml");
      await expect(createPolicy(file)).rejects.toThrow(`policy file ${file}: cannot be read`);
    });

    it("is the embedded default without a file", async () => {
      const policy = await createPolicy(undefined);
      expect(policy.source).toBeUndefined();
      expect(policy.allows(alice, Action.CREATE, Kind.sandboxEngines, "anywhere")).toBe(true);
    });
  });
});

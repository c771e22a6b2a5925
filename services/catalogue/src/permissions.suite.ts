// Every call of the catalogue and secret services as an administrator, a member, a viewer, a
// stranger and an anonymous caller: allowed calls succeed, refused ones change nothing.
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ALL_KINDS, type KindDescriptor } from "./kinds.js";
import {
  expectCode,
  kindApi,
  TEST_WORKSPACE,
  type Clients,
  type Who,
  minimalBody,
  useCatalogueHarness,
} from "./testing.js";

const harness = useCatalogueHarness("permissions");

const ws = TEST_WORKSPACE;
let counter = 0;

const freshId = (d: KindDescriptor) => (d.family === "version" ? `1.0.${++counter}` : `r${++counter}`);

interface Call {
  readonly name: string;
  readonly write: boolean;
  /** Runs the call as `clients` against fresh fixtures; returns a check that nothing changed. */
  run(clients: Clients): Promise<unknown>;
}

function kindCalls(d: KindDescriptor): Call[] {
  const admin = () => kindApi(harness().as("admin"), d);
  const fixture = async () => {
    const id = freshId(d);
    return (await admin().create(ws, id, minimalBody(d))).name as string;
  };
  const calls: Call[] = [
    { name: `Create${d.singular}`, write: true, run: (c) => kindApi(c, d).create(ws, freshId(d), minimalBody(d)) },
    { name: `Get${d.singular}`, write: false, run: async (c) => kindApi(c, d).get(await fixture()) },
    // Listing every profile is for administrators (members list the ones assigned to them).
    { name: `List${d.singular}s`, write: d.family === "profile", run: (c) => kindApi(c, d).list(ws) },
    {
      name: `Update${d.singular}`,
      write: true,
      run: async (c) => kindApi(c, d).update({ name: await fixture(), ...minimalBody(d) }, [d.updatable[0]!]),
    },
    {
      name: `Delete${d.singular}`,
      write: true,
      run: async (c) => {
        const name = await fixture();
        try {
          return await kindApi(c, d).delete(name);
        } catch (err) {
          await admin().get(name); // still there
          throw err;
        }
      },
    },
  ];
  if (d.family === "profile") {
    calls.push(
      { name: `Copy${d.singular}`, write: true, run: async (c) => kindApi(c, d).copy(await fixture(), ws, freshId(d)) },
      { name: `ListAssigned${d.singular}s`, write: false, run: (c) => kindApi(c, d).listAssigned(ws) },
    );
  }
  if (d.family === "version") {
    calls.push({
      name: `Assign${d.singular}Aliases`,
      write: true,
      run: async (c) => {
        const name = await fixture();
        try {
          return await kindApi(c, d).assignAliases(name, [`alias-${counter}`]);
        } catch (err) {
          expect((await admin().get(name)).aliases).toEqual([]);
          throw err;
        }
      },
    });
  }
  return calls;
}

const CATALOGUE_EXPECTED: Record<Who, { read: boolean; write: boolean }> = {
  admin: { read: true, write: true },
  member: { read: true, write: false },
  viewer: { read: true, write: false },
  stranger: { read: true, write: false },
  anonymous: { read: false, write: false },
};

describe.each(ALL_KINDS.map((d) => [d.kind, d] as const))("%s", (_kind, d) => {
  const cases = kindCalls(d).flatMap((call) =>
    (["admin", "member", "viewer", "stranger", "anonymous"] as Who[]).map((who) => ({ call, who })),
  );
  it.each(cases.map((c) => ({ ...c, label: `${c.call.name} as ${c.who}` })))("$label", async ({ call, who }) => {
    const expected = call.write ? CATALOGUE_EXPECTED[who].write : CATALOGUE_EXPECTED[who].read;
    const result = call.run(harness().as(who));
    if (expected) {
      await result;
    } else if (who === "anonymous") {
      await expectCode(result, Code.Unauthenticated);
    } else {
      const err = await expectCode(result, Code.PermissionDenied);
      expect(err.rawMessage).toMatch(new RegExp(`lacks actions/enginemanager/${d.kind}/[A-Z_]+ on workspaces/${ws}`));
    }
  });
});

describe("secrets", () => {
  let n = 0;
  const secretFixture = async () => {
    const id = `s${++n}`;
    // The member's own secret: this table is about workspace roles; owners are secrets.suite's.
    await harness()
      .as("member")
      .secrets.createSecret({ parent: `workspaces/${ws}`, secretId: id });
    await harness()
      .as("member")
      .secretVersions.addSecretVersion({
        parent: `workspaces/${ws}/secrets/${id}`,
        secretVersion: { value: new TextEncoder().encode("v") },
      });
    return `workspaces/${ws}/secrets/${id}`;
  };
  const calls: Array<Call & { viewer: boolean }> = [
    {
      name: "CreateSecret",
      write: true,
      viewer: false,
      run: (c) => c.secrets.createSecret({ parent: `workspaces/${ws}`, secretId: `c${++n}` }),
    },
    {
      name: "GetSecret",
      write: false,
      viewer: true,
      run: async (c) => c.secrets.getSecret({ name: await secretFixture() }),
    },
    {
      name: "ListSecrets",
      write: false,
      viewer: true,
      run: (c) => c.secrets.listSecrets({ parent: `workspaces/${ws}` }),
    },
    {
      name: "DeleteSecret",
      write: true,
      viewer: false,
      run: async (c) => {
        const name = await secretFixture();
        try {
          return await c.secrets.deleteSecret({ name });
        } catch (err) {
          await harness().as("admin").secrets.getSecret({ name });
          throw err;
        }
      },
    },
    {
      name: "AddSecretVersion",
      write: true,
      viewer: false,
      run: async (c) =>
        c.secretVersions.addSecretVersion({
          parent: await secretFixture(),
          secretVersion: { value: new Uint8Array([1]) },
        }),
    },
    {
      name: "GetSecretVersion",
      write: false,
      viewer: true,
      run: async (c) => c.secretVersions.getSecretVersion({ name: `${await secretFixture()}/versions/latest` }),
    },
    {
      name: "ListSecretVersions",
      write: false,
      viewer: true,
      run: async (c) => c.secretVersions.listSecretVersions({ parent: await secretFixture() }),
    },
  ];
  const allowed = (who: Who, call: (typeof calls)[number]) =>
    who === "admin" || who === "member" || (who === "viewer" && call.viewer);
  const cases = calls.flatMap((call) =>
    (["admin", "member", "viewer", "stranger", "anonymous"] as Who[]).map((who) => ({ call, who })),
  );

  it.each(cases.map((c) => ({ ...c, label: `${c.call.name} as ${c.who}` })))("$label", async ({ call, who }) => {
    const result = call.run(harness().as(who));
    if (allowed(who, call)) await result;
    else if (who === "anonymous") await expectCode(result, Code.Unauthenticated);
    else await expectCode(result, Code.PermissionDenied, `on workspaces/${ws}`);
  });

  it("keeps members of one workspace out of another's secrets", async () => {
    const erin = await harness().asUser("erin");
    await expectCode(erin.secrets.listSecrets({ parent: `workspaces/${ws}` }), Code.PermissionDenied);
    await erin.secrets.createSecret({ parent: "workspaces/team-b", secretId: "erins" });
    await expectCode(
      harness().as("member").secrets.getSecret({ name: "workspaces/team-b/secrets/erins" }),
      Code.PermissionDenied,
    );
  });
});

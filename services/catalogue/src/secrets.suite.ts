// Secrets and secret versions: CRUD, `latest`, encryption at rest, the internal resolver, and
// that no response, event or log line ever carries a value.
import { randomBytes } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { sql } from "kysely";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Principal } from "@aiem/kit/identity";
import { createLogger } from "@aiem/kit/logger";
import { EventSchema, type Event } from "@aiem/proto/enginemanager/events/v1/event_pb.js";
import { SecretVersionRevealed_Target } from "@aiem/proto/enginemanager/events/v1/secret_events_pb.js";
import { createSecretCipher } from "./secret-cipher.js";
import type { SecretReveal } from "./secret-reveal.js";
import { createCatalogueHarness, expectCode, expectInvalid, type CatalogueHarness } from "./testing.js";

const logLines: string[] = [];
let h: CatalogueHarness;
const seen: Uint8Array[] = [];
const published: Event[] = [];

beforeAll(async () => {
  h = await createCatalogueHarness("secrets", {
    logger: createLogger({ level: "debug", write: (l) => logLines.push(l) }),
  });
  // Everything published on the bus, to prove no value ever leaves through events.
  h.bus.replay({ subjects: "enginemanager.catalogue.>" }, async (m) => void seen.push(m.data));
  h.bus.replay({ subjects: "enginemanager.secrets.>" }, async (m) => {
    seen.push(m.data);
    published.push(fromBinary(EventSchema, m.data));
  });
});
afterAll(async () => {
  await h?.close();
});

const ws = "team-a";
const VALUE = "s3cr3t-value-that-must-never-leak";
const bytes = (s: string) => new TextEncoder().encode(s);

function containsValue(haystack: Uint8Array | string, value: string): boolean {
  return Buffer.from(typeof haystack === "string" ? haystack : Buffer.from(haystack)).includes(Buffer.from(value));
}

describe("secrets", () => {
  it("lets a member create, get, list and delete secrets of their workspace", async () => {
    const alice = h.as("member");
    const { secret } = await alice.secrets.createSecret({
      parent: `workspaces/${ws}`,
      secretId: "db-password",
      secret: { displayName: "Database", annotations: { "app.name": "db" }, uid: "forged", creator: "users/x" },
    });
    expect(secret).toMatchObject({
      name: `workspaces/${ws}/secrets/db-password`,
      displayName: "Database",
      annotations: { "app.name": "db" },
      creator: "users/alice",
      creatorDisplayName: "Alice Member",
      updater: "users/alice",
    });
    expect(secret!.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect((await alice.secrets.getSecret({ name: secret!.name })).secret).toEqual(secret);
    await alice.secrets.createSecret({
      parent: `workspaces/${ws}`,
      secretId: "api-token",
      secret: { displayName: "API" },
    });
    const list = await alice.secrets.listSecrets({ parent: `workspaces/${ws}`, orderBy: "display_name" });
    expect(list.secrets.map((s) => s.displayName)).toEqual(["API", "Database"]);
    const filtered = await alice.secrets.listSecrets({ parent: `workspaces/${ws}`, filter: 'display_name = "Data*"' });
    expect(filtered.secrets.map((s) => s.name)).toEqual([secret!.name]);
    await alice.secrets.deleteSecret({ name: `workspaces/${ws}/secrets/api-token` });
    await expectCode(
      alice.secrets.getSecret({ name: `workspaces/${ws}/secrets/api-token` }),
      Code.NotFound,
      "api-token",
    );
  });

  it("lets only the creator or an administrator delete a secret or add versions to it", async () => {
    const alice = h.as("member");
    const bob = await h.asUser("bob");
    const parent = `workspaces/${ws}/secrets/owned`;
    await alice.secrets.createSecret({ parent: `workspaces/${ws}`, secretId: "owned" });
    const add = (c: typeof alice) =>
      c.secretVersions.addSecretVersion({ parent, secretVersion: { value: bytes("v") } });
    // Another member sees it exists (metadata is a workspace read) but cannot change or delete it.
    expect((await bob.secrets.getSecret({ name: parent })).secret?.creator).toBe("users/alice");
    const denied = await expectCode(add(bob), Code.PermissionDenied, parent);
    expect(denied.rawMessage).toContain("only the secret's creator or an administrator");
    await expectCode(bob.secrets.deleteSecret({ name: parent }), Code.PermissionDenied, parent);
    await expectCode(h.as("viewer").secrets.deleteSecret({ name: parent }), Code.PermissionDenied);
    expect((await alice.secretVersions.listSecretVersions({ parent })).secretVersions).toEqual([]);
    // The owner and an administrator can.
    expect((await add(alice)).secretVersion?.name).toBe(`${parent}/versions/1`);
    expect((await add(h.as("admin"))).secretVersion?.name).toBe(`${parent}/versions/2`);
    await h.as("admin").secrets.deleteSecret({ name: parent });
    await expectCode(alice.secrets.getSecret({ name: parent }), Code.NotFound);
    // bob's own secret is bob's.
    await bob.secrets.createSecret({ parent: `workspaces/${ws}`, secretId: "bobs" });
    await expectCode(alice.secrets.deleteSecret({ name: `workspaces/${ws}/secrets/bobs` }), Code.PermissionDenied);
    await bob.secrets.deleteSecret({ name: `workspaces/${ws}/secrets/bobs` });
  });

  it.each([
    ["secret_id", { secretId: "" }],
    ["secret_id", { secretId: "Bad" }],
    ["secret.display_name", { secretId: "ok", secret: { displayName: "d".repeat(64) } }],
    ['secret.annotations["-bad"]', { secretId: "ok", secret: { annotations: { "-bad": "x" } } }],
    ["parent", { parent: "workspaces/", secretId: "ok" }],
  ])("rejects a bad %s", async (field, req) => {
    await expectInvalid(h.as("member").secrets.createSecret({ parent: `workspaces/${ws}`, ...req } as never), field);
  });

  it("answers ALREADY_EXISTS and NOT_FOUND with the name", async () => {
    const alice = h.as("member");
    await alice.secrets.createSecret({ parent: `workspaces/${ws}`, secretId: "twice" });
    await expectCode(
      alice.secrets.createSecret({ parent: `workspaces/${ws}`, secretId: "twice" }),
      Code.AlreadyExists,
      `workspaces/${ws}/secrets/twice`,
    );
    await expectCode(
      alice.secrets.getSecret({ name: `workspaces/${ws}/secrets/none` }),
      Code.NotFound,
      `workspaces/${ws}/secrets/none`,
    );
    await expectCode(
      alice.secrets.deleteSecret({ name: `workspaces/${ws}/secrets/none` }),
      Code.NotFound,
      `workspaces/${ws}/secrets/none`,
    );
  });
});

describe("secret versions", () => {
  const parent = `workspaces/${ws}/secrets/token`;

  beforeAll(async () => {
    await h.as("member").secrets.createSecret({ parent: `workspaces/${ws}`, secretId: "token" });
  });

  it("adds numbered versions without ever returning the value; latest is the newest", async () => {
    const alice = h.as("member");
    const v1 = await alice.secretVersions.addSecretVersion({
      parent,
      secretVersion: { value: bytes(`${VALUE}-1`), name: "forged" },
    });
    expect(v1.secretVersion).toMatchObject({
      name: `${parent}/versions/1`,
      creator: "users/alice",
      creatorDisplayName: "Alice Member",
    });
    expect(v1.secretVersion!.value).toEqual(new Uint8Array());
    const v2 = await alice.secretVersions.addSecretVersion({ parent, secretVersion: { value: bytes(`${VALUE}-2`) } });
    expect(v2.secretVersion!.name).toBe(`${parent}/versions/2`);
    const latest = await alice.secretVersions.getSecretVersion({ name: `${parent}/versions/latest` });
    expect(latest.secretVersion).toEqual(v2.secretVersion);
    expect((await alice.secretVersions.getSecretVersion({ name: `${parent}/versions/1` })).secretVersion).toEqual(
      v1.secretVersion,
    );
    const list = await alice.secretVersions.listSecretVersions({ parent });
    expect(list.secretVersions.map((v) => v.name)).toEqual([`${parent}/versions/2`, `${parent}/versions/1`]);
    expect(list.secretVersions.every((v) => v.value.length === 0)).toBe(true);
    const paged = await alice.secretVersions.listSecretVersions({ parent, pageSize: 1 });
    expect(paged.secretVersions).toHaveLength(1);
    const next = await alice.secretVersions.listSecretVersions({ parent, pageSize: 1, pageToken: paged.nextPageToken });
    expect(next.secretVersions.map((v) => v.name)).toEqual([`${parent}/versions/1`]);
  });

  it("accepts 1 byte to 64 KiB of any content", async () => {
    const alice = h.as("member");
    await alice.secretVersions.addSecretVersion({ parent, secretVersion: { value: new Uint8Array([0]) } });
    await alice.secretVersions.addSecretVersion({ parent, secretVersion: { value: randomBytes(64 * 1024) } });
    await expectInvalid(
      alice.secretVersions.addSecretVersion({ parent, secretVersion: { value: randomBytes(64 * 1024 + 1) } }),
      "secret_version.value",
    );
    await expectInvalid(
      alice.secretVersions.addSecretVersion({ parent, secretVersion: { value: new Uint8Array() } }),
      "secret_version.value",
    );
    await expectInvalid(alice.secretVersions.addSecretVersion({ parent }), "secret_version.value");
  });

  it("answers NOT_FOUND for a missing secret or version and INVALID_ARGUMENT for a bad version id", async () => {
    const alice = h.as("member");
    const missing = `workspaces/${ws}/secrets/missing`;
    await expectCode(
      alice.secretVersions.addSecretVersion({ parent: missing, secretVersion: { value: bytes("x") } }),
      Code.NotFound,
      missing,
    );
    await expectCode(alice.secretVersions.listSecretVersions({ parent: missing }), Code.NotFound, missing);
    await expectCode(
      alice.secretVersions.getSecretVersion({ name: `${parent}/versions/99` }),
      Code.NotFound,
      `${parent}/versions/99`,
    );
    await expectCode(
      alice.secretVersions.getSecretVersion({ name: `${missing}/versions/latest` }),
      Code.NotFound,
      `${missing}/versions/latest`,
    );
    await expectInvalid(alice.secretVersions.getSecretVersion({ name: `${parent}/versions/newest` }), "name");
    await expectInvalid(alice.secretVersions.getSecretVersion({ name: `${parent}/versions/0` }), "name");
  });

  it("stores values encrypted with AES-256-GCM under a fresh nonce each", async () => {
    const rows = (
      await sql<{ nonce: Uint8Array; ciphertext: Uint8Array; key_id: string }>`
      select nonce, ciphertext, key_id from secret_versions`.execute(h.database.db)
    ).rows;
    expect(rows.length).toBeGreaterThan(2);
    for (const row of rows) {
      expect(row.nonce).toHaveLength(12);
      expect(containsValue(row.ciphertext, VALUE)).toBe(false);
    }
    expect(new Set(rows.map((r) => Buffer.from(r.nonce).toString("hex"))).size).toBe(rows.length);
    const dump = (
      await sql<{ t: string }>`select string_agg(resource::text, '') as t from secret_versions`.execute(h.database.db)
    ).rows[0]!.t;
    expect(dump).not.toContain(Buffer.from(VALUE).toString("hex"));
  });

  it("never publishes or logs a value", async () => {
    await h.module.flushEvents();
    await new Promise((r) => setTimeout(r, 50));
    for (const data of seen) expect(containsValue(data, VALUE)).toBe(false);
    const outbox = (await sql<{ payload: Uint8Array }>`select payload from outbox`.execute(h.database.db)).rows;
    for (const row of outbox) expect(containsValue(row.payload, VALUE)).toBe(false);
    expect(logLines.some((l) => l.includes(VALUE))).toBe(false);
  });
});

const TO_FILE: SecretReveal = {
  sandboxEngine: `workspaces/${ws}/sandboxEngines/box`,
  target: SecretVersionRevealed_Target.FILE,
  destination: "/workspace/key",
};
const BOB: Principal = { name: "users/bob", subject: "bob", displayName: "Bob", roles: [], admin: false };
const reveal = (principal: Principal, name: string, to: SecretReveal = TO_FILE) =>
  h.module.resolveSecretValue(principal, name, to);

/** The audit events in the catalogue's outbox, oldest first. */
async function revealEvents(): Promise<{ subject: string; event: Event }[]> {
  const rows = (
    await sql<{
      subject: string;
      payload: Uint8Array;
    }>`select subject, payload from outbox where subject like 'enginemanager.secrets.%' order by seq`.execute(
      h.database.db,
    )
  ).rows;
  return rows.map((r) => ({ subject: r.subject, event: fromBinary(EventSchema, r.payload) }));
}

describe("resolveSecretValue (internal)", () => {
  const parent = `workspaces/${ws}/secrets/reveal`;

  beforeAll(async () => {
    const alice = h.as("member");
    await alice.secrets.createSecret({ parent: `workspaces/${ws}`, secretId: "reveal" });
    await alice.secretVersions.addSecretVersion({ parent, secretVersion: { value: bytes("first") } });
    await alice.secretVersions.addSecretVersion({ parent, secretVersion: { value: bytes("second") } });
  });

  it("returns the plaintext of a version, latest resolved to its real name", async () => {
    const latest = await reveal(h.principal("member"), `${parent}/versions/latest`);
    expect(latest.name).toBe(`${parent}/versions/2`);
    expect(new TextDecoder().decode(latest.value)).toBe("second");
    const first = await reveal(h.principal("member"), `${parent}/versions/1`);
    expect(new TextDecoder().decode(first.value)).toBe("first");
    const asAdmin = await reveal(h.principal("admin"), `${parent}/versions/1`);
    expect(new TextDecoder().decode(asAdmin.value)).toBe("first");
  });

  it("is for the secret's owner and administrators: not a viewer, another member or a stranger", async () => {
    const err = await expectCode(reveal(h.principal("viewer"), `${parent}/versions/1`), Code.PermissionDenied);
    expect(err.rawMessage).toContain(`lacks actions/enginemanager/secretVersions/ACCESS on workspaces/${ws}`);
    const other = await expectCode(reveal(BOB, `${parent}/versions/1`), Code.PermissionDenied);
    expect(other.rawMessage).toContain("only the secret's creator or an administrator");
    await expectCode(reveal(h.principal("stranger"), `${parent}/versions/1`), Code.PermissionDenied);
    // A missing version of someone else's secret is still theirs: refused, not NOT_FOUND.
    await expectCode(reveal(BOB, `${parent}/versions/9`), Code.PermissionDenied);
  });

  it("records every reveal as an audit event before handing out the value, and nothing for a refusal", async () => {
    const before = await revealEvents();
    await reveal(h.principal("member"), `${parent}/versions/latest`, {
      sandboxEngine: `workspaces/${ws}/sandboxEngines/box`,
      target: SecretVersionRevealed_Target.ENVIRONMENT_VARIABLE,
      destination: "API_KEY",
      process: `workspaces/${ws}/sandboxEngines/box/processes/p1`,
    });
    await expectCode(reveal(BOB, `${parent}/versions/1`), Code.PermissionDenied);
    const after = await revealEvents();
    expect(after).toHaveLength(before.length + 1);
    const { subject, event } = after.at(-1)!;
    expect(subject).toBe(`enginemanager.secrets.${ws}.reveal.revealed`);
    expect(event.source).toBe("catalogue");
    expect(event.payload.case).toBe("secretVersionRevealed");
    expect(event.payload.value).toMatchObject({
      secretVersion: `${parent}/versions/2`,
      principal: "users/alice",
      sandboxEngine: `workspaces/${ws}/sandboxEngines/box`,
      target: SecretVersionRevealed_Target.ENVIRONMENT_VARIABLE,
      destination: "API_KEY",
      process: `workspaces/${ws}/sandboxEngines/box/processes/p1`,
    });
    expect((event.payload.value as { secretUid: string }).secretUid).toMatch(/^[0-9a-f-]{36}$/);
    // And it reaches the bus.
    await h.module.flushEvents();
    await vi.waitFor(() => expect(published.some((e) => e.id === event.id)).toBe(true));
  });

  it("answers NOT_FOUND with the name and INVALID_ARGUMENT for a malformed name", async () => {
    await expectCode(reveal(h.principal("member"), `${parent}/versions/9`), Code.NotFound, `${parent}/versions/9`);
    await expectInvalid(reveal(h.principal("member"), "workspaces/team-a/secrets/x"), "secret_version");
  });

  it("refuses a ciphertext moved to another row (bound to name and secret)", async () => {
    await sql`update secret_versions set ciphertext = (select ciphertext from secret_versions where name = ${`${parent}/versions/2`}),
      nonce = (select nonce from secret_versions where name = ${`${parent}/versions/2`}) where name = ${`${parent}/versions/1`}`.execute(
      h.database.db,
    );
    await expectCode(reveal(h.principal("member"), `${parent}/versions/1`), Code.Internal, "cannot be decrypted");
  });

  it("is gone with its secret", async () => {
    await h.as("member").secrets.deleteSecret({ name: parent });
    await expectCode(reveal(h.principal("member"), `${parent}/versions/latest`), Code.NotFound);
    const left = await sql<{ n: bigint }>`select count(*) as n from secret_versions where secret_id = 'reveal'`.execute(
      h.database.db,
    );
    expect(Number(left.rows[0]!.n)).toBe(0);
  });

  it("reports a changed secrets key instead of returning garbage", async () => {
    const alice = h.as("member");
    await alice.secrets.createSecret({ parent: `workspaces/${ws}`, secretId: "rekey" });
    await alice.secretVersions.addSecretVersion({
      parent: `workspaces/${ws}/secrets/rekey`,
      secretVersion: { value: bytes("x") },
    });
    const other = await createCatalogueHarness("secrets2", {
      database: h.database,
      bus: h.bus,
      secretsKey: randomBytes(32).toString("base64"),
    });
    try {
      await expectCode(
        other.module.resolveSecretValue(
          other.principal("member"),
          `workspaces/${ws}/secrets/rekey/versions/1`,
          TO_FILE,
        ),
        Code.Internal,
        "AIEM_SECRETS_KEY",
      );
    } finally {
      await other.close();
    }
  });
});

describe("the cipher", () => {
  it("round-trips and rejects tampering, a wrong key and a wrong binding", () => {
    const key = randomBytes(32);
    const c = createSecretCipher(key);
    const { nonce, ciphertext } = c.encrypt(bytes("hello"), "uid\nname");
    expect(new TextDecoder().decode(c.decrypt(nonce, ciphertext, "uid\nname"))).toBe("hello");
    expect(() => c.decrypt(nonce, ciphertext, "uid\nother")).toThrow();
    const bad = Buffer.from(ciphertext);
    bad[0]! ^= 1;
    expect(() => c.decrypt(nonce, bad, "uid\nname")).toThrow();
    expect(() => createSecretCipher(randomBytes(32)).decrypt(nonce, ciphertext, "uid\nname")).toThrow();
    expect(createSecretCipher(key).keyId).toBe(c.keyId);
    expect(() => createSecretCipher(randomBytes(16))).toThrow();
  });
});

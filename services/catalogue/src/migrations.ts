// The catalogue schema. Each kind has its own table: typed columns for what lists filter and sort
// on, and the whole resource as protobuf bytes. Text columns use the "C" collation so the
// database sorts strings as page tokens and clients compare them (byte order). Migrations are
// frozen once released: add new ones, never edit these.
import { sql, type Kysely, type Migration } from "kysely";
import { outboxMigration } from "@aiem/kit/events";
import { versionSortKey } from "./version-order.js";

async function createKindTable(db: Kysely<any>, table: string, extra: string): Promise<void> {
  await sql
    .raw(`
    create table ${table} (
      workspace text collate "C" not null,
      id text collate "C" not null,
      name text collate "C" not null unique,
      ${extra}
      create_time timestamptz not null,
      update_time timestamptz not null,
      resource bytea not null,
      primary key (workspace, id)
    )`)
    .execute(db);
  // The default order, create_time desc, with the name as tiebreaker.
  await sql.raw(`create index ${table}_ws_create_idx on ${table} (workspace, create_time, name)`).execute(db);
}

const PROFILE = `
    display_name text collate "C" not null,
    priority integer not null,
    enabled boolean not null,
    assigned_oidc_roles_enabled boolean not null,
    assigned_oidc_roles text[] not null,`;
const VERSION = `
    deprecated boolean not null,
    image text collate "C" not null,`;
const IMAGE = `
    display_name text collate "C" not null,
    image text collate "C" not null,
    enabled boolean not null,`;
const TEMPLATE = `
    display_name text collate "C" not null,
    enabled boolean not null,
    gpu integer not null,
    memory_bytes_limit bigint not null,
    max_idle_ms bigint not null,`;

const catalogueTables: Migration = {
  async up(db: Kysely<any>) {
    for (const table of ["dai_engine_profiles", "h2o_engine_profiles", "notebook_engine_profiles"]) {
      await createKindTable(db, table, PROFILE);
      // ListAssigned walks enabled profiles by priority, then name.
      await sql
        .raw(`create index ${table}_assigned_idx on ${table} (workspace, priority, name) where enabled`)
        .execute(db);
    }
    for (const table of ["dai_engine_versions", "h2o_engine_versions"]) await createKindTable(db, table, VERSION);
    for (const table of ["notebook_engine_images", "sandbox_engine_images"]) await createKindTable(db, table, IMAGE);
    await createKindTable(db, "sandbox_engine_templates", TEMPLATE);

    // Aliases are unique per kind and workspace; the version's resource bytes hold them too.
    await sql`
      create table version_aliases (
        kind text collate "C" not null,
        workspace text collate "C" not null,
        alias text collate "C" not null,
        version_id text collate "C" not null,
        primary key (kind, workspace, alias)
      )`.execute(db);
    await sql`create index version_aliases_version_idx on version_aliases (kind, workspace, version_id)`.execute(db);

    await sql`
      create table secrets (
        workspace text collate "C" not null,
        id text collate "C" not null,
        name text collate "C" not null unique,
        uid text not null unique,
        display_name text collate "C" not null,
        last_version bigint not null default 0,
        create_time timestamptz not null,
        update_time timestamptz not null,
        resource bytea not null,
        primary key (workspace, id)
      )`.execute(db);
    await sql`create index secrets_ws_create_idx on secrets (workspace, create_time, name)`.execute(db);
    await sql`
      create table secret_versions (
        workspace text collate "C" not null,
        secret_id text collate "C" not null,
        version bigint not null,
        name text collate "C" not null unique,
        create_time timestamptz not null,
        resource bytea not null,
        key_id text not null,
        nonce bytea not null,
        ciphertext bytea not null,
        primary key (workspace, secret_id, version),
        foreign key (workspace, secret_id) references secrets (workspace, id) on delete cascade
      )`.execute(db);

    // One row per seed applied to this database, so a deleted demo resource stays deleted.
    await sql`
      create table seeds (
        name text primary key,
        applied_at timestamptz not null default now()
      )`.execute(db);
  },
  async down(db: Kysely<any>) {
    for (const table of [
      "seeds",
      "secret_versions",
      "secrets",
      "version_aliases",
      "sandbox_engine_templates",
      "sandbox_engine_images",
      "notebook_engine_images",
      "h2o_engine_versions",
      "dai_engine_versions",
      "notebook_engine_profiles",
      "h2o_engine_profiles",
      "dai_engine_profiles",
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
};

// Versions list newest version first: a key whose byte order is the version number's order.
const versionOrder: Migration = {
  async up(db: Kysely<any>) {
    for (const table of ["dai_engine_versions", "h2o_engine_versions"]) {
      await sql.raw(`alter table ${table} add column version_key text collate "C"`).execute(db);
      const rows = (await db.selectFrom(table).select(["workspace", "id"]).execute()) as Array<{
        workspace: string;
        id: string;
      }>;
      for (const row of rows) {
        await db
          .updateTable(table)
          .set({ version_key: versionSortKey(row.id) })
          .where("workspace", "=", row.workspace)
          .where("id", "=", row.id)
          .execute();
      }
      await sql.raw(`alter table ${table} alter column version_key set not null`).execute(db);
      await sql.raw(`create index ${table}_ws_version_idx on ${table} (workspace, version_key, name)`).execute(db);
    }
  },
  async down(db: Kysely<any>) {
    for (const table of ["dai_engine_versions", "h2o_engine_versions"]) {
      await sql.raw(`alter table ${table} drop column version_key`).execute(db);
    }
  },
};

export const catalogueMigrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_catalogue_tables": catalogueTables,
  "0003_version_order": versionOrder,
};

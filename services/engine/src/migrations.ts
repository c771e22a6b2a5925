// The engine schema: one table for DAI, H2O and notebook engines, so the mixed Engine list is a
// plain query. Typed columns for what lists filter and sort on, what the reconciler schedules by
// and what quotas add up; the engine's other fields as protobuf bytes. Text columns use the "C"
// collation so the database sorts strings as page tokens and clients compare them. Migrations are
// frozen once released: add new ones, never edit these.
import { sql, type Kysely, type Migration } from "kysely";
import { outboxMigration } from "@aiem/kit/events";
import { replicasMigration } from "@aiem/kit/server";

const engineTable: Migration = {
  async up(db: Kysely<any>) {
    await sql`
      create table engines (
        uid text collate "C" primary key,
        type text collate "C" not null,
        workspace text collate "C" not null,
        engine_id text collate "C" not null,
        name text collate "C" not null unique,
        display_name text collate "C" not null,
        creator text collate "C" not null,
        creator_display_name text collate "C" not null,
        profile text collate "C" not null,
        -- what the engine runs: the version id (DAI, H2O) or the notebook image name, and the
        -- full name of that version or image
        version text collate "C" not null,
        version_name text collate "C" not null,
        state text collate "C" not null,
        desired text collate "C" not null,
        reconciling boolean not null,
        shared boolean not null default false,
        cpu integer not null,
        gpu integer not null,
        memory_bytes bigint not null,
        storage_bytes bigint not null,
        node_count integer,
        max_idle_ms bigint not null,
        max_running_ms bigint not null,
        create_time timestamptz not null,
        update_time timestamptz not null,
        delete_time timestamptz,
        resume_time timestamptz,
        last_activity_time timestamptz,
        -- when the current start (create or resume) was asked for, and when the runtime was
        -- told to carry it out (null until then)
        start_time timestamptz,
        launched_at timestamptz,
        failure_reason text collate "C" not null default '',
        failure_message text not null default '',
        storage_resizing boolean not null default false,
        total_disk_bytes bigint,
        free_disk_bytes bigint,
        -- reconciler bookkeeping: every change of intent bumps generation; due rows have
        -- next_reconcile_at in the past; a claim holds a lease; placement pins a row to the
        -- runtime instance that runs it
        generation bigint not null default 1,
        next_reconcile_at timestamptz,
        lease_owner text,
        lease_until timestamptz,
        placement text,
        resource bytea not null
      )`.execute(db);
    // Typed lists (and the 100k benchmark's shape): one workspace and kind, newest first.
    await sql`create index engines_ws_type_ct_idx on engines (workspace, type, create_time, uid)`.execute(db);
    // The mixed list of one workspace, and of all of them.
    await sql`create index engines_ws_ct_idx on engines (workspace, create_time, uid)`.execute(db);
    await sql`create index engines_ct_idx on engines (create_time, uid)`.execute(db);
    // Filtering by state, of one kind or all (the mixed list). The included columns let the count
    // behind totalSize run as an index-only scan for the usual filters and the visibility rule.
    await sql`create index engines_ws_type_state_idx on engines (workspace, type, state) include (creator, shared, cpu, gpu, memory_bytes)`.execute(
      db,
    );
    await sql`create index engines_ws_state_idx on engines (workspace, state) include (type, creator, shared, cpu, gpu, memory_bytes)`.execute(
      db,
    );
    // The reconciler's queue.
    await sql`create index engines_due_idx on engines (next_reconcile_at) where next_reconcile_at is not null`.execute(
      db,
    );
    // Quotas: a user's engines of one profile.
    await sql`create index engines_quota_idx on engines (creator, profile)`.execute(db);
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("engines").execute();
  },
};

export const engineMigrations: Record<string, Migration> = {
  "0001_outbox": outboxMigration,
  "0002_engines": engineTable,
  // Where each replica answers, for calls about engines pinned to it (their logs, their web server).
  "0003_replicas": replicasMigration,
};

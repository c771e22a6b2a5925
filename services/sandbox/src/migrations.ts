// The sandbox schema: sandbox engines (desired and observed state), their processes and ports,
// and the outbox. Resources are stored as protobuf bytes next to the typed columns that lists
// filter and sort on. A process row holds its command, arguments, working directory, variables
// and the names of its secret versions, never a secret value. Text columns use the "C" collation
// so the database sorts strings in byte order, as page tokens compare them. Migrations are
// frozen once released: add new ones, never edit these.
import { sql, type Kysely, type Migration } from "kysely";
import { eventMigrations } from "@aiem/kit/events";
import { replicasMigration } from "@aiem/kit/server";

const sandboxTables: Migration = {
  async up(db: Kysely<any>) {
    await sql`
      create table sandbox_engines (
        workspace text collate "C" not null,
        id text collate "C" not null,
        name text collate "C" not null unique,
        uid text collate "C" not null unique,
        display_name text collate "C" not null,
        state text collate "C" not null,
        desired text collate "C" not null,
        creator text collate "C" not null,
        creator_display_name text collate "C" not null,
        sandbox_engine_image text collate "C" not null,
        sandbox_engine_template text collate "C" not null,
        runtime_id text collate "C" not null,
        max_idle_ms bigint not null,
        create_time timestamptz not null,
        update_time timestamptz not null,
        last_activity timestamptz not null,
        failure_reason text,
        resource bytea not null,
        primary key (workspace, id)
      )`.execute(db);
    await sql`create index sandbox_engines_ws_create_idx on sandbox_engines (workspace, create_time, name)`.execute(db);
    await sql`create index sandbox_engines_state_idx on sandbox_engines (state)`.execute(db);
    await sql`
      create table processes (
        sandbox_uid text collate "C" not null,
        id text collate "C" not null,
        name text collate "C" not null,
        state text collate "C" not null,
        exit_code integer,
        agent_id text collate "C",
        create_time timestamptz not null,
        start_time timestamptz,
        end_time timestamptz,
        resource bytea not null,
        primary key (sandbox_uid, id)
      )`.execute(db);
    await sql`create index processes_create_idx on processes (sandbox_uid, create_time, name)`.execute(db);
    await sql`
      create table ports (
        sandbox_uid text collate "C" not null,
        port integer not null,
        name text collate "C" not null,
        public boolean not null,
        create_time timestamptz not null,
        resource bytea not null,
        primary key (sandbox_uid, port)
      )`.execute(db);
  },
  async down(db: Kysely<any>) {
    await db.schema.dropTable("ports").execute();
    await db.schema.dropTable("processes").execute();
    await db.schema.dropTable("sandbox_engines").execute();
  },
};

// Templates gained a running limit: sandboxes from before it have none (0).
const runningLimit: Migration = {
  async up(db: Kysely<any>) {
    await sql`alter table sandbox_engines add column max_running_ms bigint not null default 0`.execute(db);
    await sql`alter table sandbox_engines add column start_time timestamptz`.execute(db);
  },
  async down(db: Kysely<any>) {
    await sql`alter table sandbox_engines drop column start_time`.execute(db);
    await sql`alter table sandbox_engines drop column max_running_ms`.execute(db);
  },
};

// Replicas: each sandbox is pinned to the replica whose host runs its agent (null: not yet, or
// from before replicas; the first replica to reconcile it takes it), and replicas record where
// they answer so that the others can send them calls for their sandboxes.
const placement: Migration = {
  async up(db: Kysely<any>) {
    await sql`alter table sandbox_engines add column placement text collate "C"`.execute(db);
    await replicasMigration.up(db);
  },
  async down(db: Kysely<any>) {
    await replicasMigration.down!(db);
    await sql`alter table sandbox_engines drop column placement`.execute(db);
  },
};

// Why a failed process ended, where more is known than its exit code (out of memory, its sandbox stopped).
const failureReason: Migration = {
  async up(db: Kysely<any>) {
    await sql`alter table processes add column failure_reason text`.execute(db);
  },
  async down(db: Kysely<any>) {
    await sql`alter table processes drop column failure_reason`.execute(db);
  },
};

// A sandbox is usable once a read has shown it RUNNING (or a while after its creation): sandboxes
// from before this column were all shown.
const seenRunning: Migration = {
  async up(db: Kysely<any>) {
    await sql`alter table sandbox_engines add column seen_running boolean not null default true`.execute(db);
  },
  async down(db: Kysely<any>) {
    await sql`alter table sandbox_engines drop column seen_running`.execute(db);
  },
};

export const sandboxMigrations: Record<string, Migration> = {
  ...eventMigrations,
  "0001_sandbox_tables": sandboxTables,
  "0002_running_limit": runningLimit,
  "0003_placement": placement,
  "0004_process_failure_reason": failureReason,
  "0005_seen_running": seenRunning,
};

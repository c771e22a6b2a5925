// Removes what one Python test run left on a shared PostgreSQL and NATS: the schemas named with
// the run's AIEM_DB_SCHEMA_SUFFIX and the JetStream streams of its AIEM_EVENTS_PREFIX. Run by
// tests/support.py (and by fuzz/fuzz_api.py, whose names start with `fz`) after the test server
// has stopped; a no-op without DATABASE_URL / NATS_URL.
import pg from "pg";
import { createNatsEventBus } from "@aiem/kit/events";

const suffix = process.env["AIEM_DB_SCHEMA_SUFFIX"];
const prefix = process.env["AIEM_EVENTS_PREFIX"];

if (process.env["DATABASE_URL"] && suffix && /^_(py|fz)[0-9a-f]+$/.test(suffix)) {
  const client = new pg.Client({ connectionString: process.env["DATABASE_URL"] });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(
      "select nspname from pg_namespace where right(nspname, length($1)) = $1",
      [suffix],
    );
    for (const { nspname } of rows) await client.query(`drop schema if exists "${nspname}" cascade`);
  } finally {
    await client.end();
  }
}

if (process.env["NATS_URL"] && prefix && /^(py|fz)[0-9a-f]+$/.test(prefix)) {
  const bus = await createNatsEventBus({ url: process.env["NATS_URL"], prefix });
  await bus.destroy();
}

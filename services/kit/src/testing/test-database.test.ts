import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { createTestDatabase, testSchemaName } from "./test-database.js";

describe("createTestDatabase", () => {
  it("makes a unique schema per call and drops it on destroy", async () => {
    const a = await createTestDatabase("Kit Test-DB");
    const b = await createTestDatabase("Kit Test-DB");
    expect(a.schema).toMatch(/^t_kit_test_db_[0-9a-f]{10}$/);
    expect(a.schema).not.toBe(b.schema);
    expect(a.kind).toBe(process.env.DATABASE_URL ? "pg" : "pglite");
    await a.db.schema.createTable("thing").addColumn("id", "int8").execute();
    await a.destroy();
    const { rows } = await sql<{ n: bigint }>`
      select count(*) as n from information_schema.schemata where schema_name = ${a.schema}`.execute(b.db);
    expect(rows[0]?.n).toBe(0n);
    await b.destroy();
  });

  it("keeps schema names valid identifiers", () => {
    expect(testSchemaName("")).toMatch(/^t_suite_[0-9a-f]{10}$/);
    expect(testSchemaName("x".repeat(100)).length).toBeLessThanOrEqual(63);
  });
});

import { randomBytes } from "node:crypto";
import { openDatabase, type Database } from "../db/database.js";

/**
 * A database for one test suite, in a fresh schema `t_<suite>_<random>` that destroy() drops.
 * With DATABASE_URL set it is real PostgreSQL, so suites can run in parallel against one
 * server; otherwise an in-memory PGlite instance shared by the suites of this module graph.
 */
export async function createTestDatabase(suite: string): Promise<Database> {
  const schema = testSchemaName(suite);
  const url = process.env.DATABASE_URL;
  if (url) return openDatabase({ kind: "pg", url }, { schema, dropSchemaOnDestroy: true });
  return openDatabase({ kind: "pglite", key: "memory://test" }, { schema, dropSchemaOnDestroy: true });
}

export function testSchemaName(suite: string): string {
  const slug = suite
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 40);
  return `t_${slug || "suite"}_${randomBytes(5).toString("hex")}`;
}

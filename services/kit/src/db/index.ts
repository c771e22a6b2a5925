export { createDatabase, migrateToLatest, openDatabase } from "./database.js";
export type { Database, DatabaseConfig, DatabaseTarget, OpenDatabaseOptions } from "./database.js";
export { PgliteDialect } from "./pglite-dialect.js";

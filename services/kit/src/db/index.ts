export { createDatabase, migrateToLatest, openDatabase } from "./database.js";
export type { Database, DatabaseConfig, DatabaseTarget, OpenDatabaseOptions } from "./database.js";
export { DirectoryLockedError } from "./directory-lock.js";
export { PgliteDialect } from "./pglite-dialect.js";

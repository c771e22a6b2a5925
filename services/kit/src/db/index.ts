export { createDatabase, migrateToLatest, openDatabase } from "./database.js";
export type { AnyDatabase, Database, DatabaseConfig, DatabaseTarget, OpenDatabaseOptions } from "./database.js";
export { acquireDirectoryLock, DirectoryLockedError } from "./directory-lock.js";
export type { DirectoryLock } from "./directory-lock.js";
export { PgliteDialect } from "./pglite-dialect.js";

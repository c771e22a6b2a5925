export { createTestDatabase, testSchemaName } from "./test-database.js";

export { createTestDatabase, testSchemaName } from "./test-database.js";
export { binaryContent } from "./binary-content.js";

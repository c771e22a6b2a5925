/** Schema names we accept: plain lower-case PostgreSQL identifiers, so quoting is never surprising. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid schema name ${JSON.stringify(schema)}: use lower-case letters, digits and _ (at most 63)`);
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

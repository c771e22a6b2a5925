// Shared by the AIP unit tests: a Kysely that only compiles SQL, and the message of the
// INVALID_ARGUMENT a call must throw.
import { Code, ConnectError } from "@connectrpc/connect";
import type { AnyDatabase } from "../db/index.js";
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from "kysely";
import { expect } from "vitest";

export const compileOnlyDb = new Kysely<AnyDatabase>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

export function invalidArgumentMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    return (err as ConnectError).rawMessage;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

// Statements with parameters on PGlite, each as one exchange with the embedded server and, after
// its first run, prepared: see docs/adr/0256 and 0257.
import { type PGlite, type Results, parse as pgliteParse, protocol } from "@electric-sql/pglite";

/** A parameter as the protocol carries it: text, or raw bytes (sent in binary format). */
export type WireValue = string | Uint8Array | null;

/** Prepared statements kept per instance; the least recently used beyond this are closed. */
const MAX_PREPARED = 256;

/** The server's refusal of a prepared statement whose table changed under its result type. */
const RESULT_TYPE_CHANGED = "cached plan must not change result type";

/**
 * The session's prepared statements, by search path and text. PGlite is one session for every
 * service in the process; the lock that stands in for a pool keeps them to one user at a time.
 */
export interface PreparedStatements {
  readonly byText: Map<string, string>;
  /** Statements evicted or spoilt, closed with the next message. */
  readonly toClose: string[];
  next: number;
}

export function createPreparedStatements(): PreparedStatements {
  return { byText: new Map(), toClose: [], next: 0 };
}

/**
 * The parameters as node-postgres sends them, without knowing their types: the server infers
 * each from the statement, as it does for `PGlite.query`. Undefined when one is of a kind this
 * does not carry (an array, an object): `PGlite.query`, which asks for the types, takes those.
 */
export function wireValues(parameters: readonly unknown[]): WireValue[] | undefined {
  const values: WireValue[] = [];
  for (const value of parameters) {
    if (value === null || value === undefined) values.push(null);
    else if (typeof value === "string") values.push(value);
    else if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean")
      values.push(String(value));
    else if (value instanceof Date) values.push(value.toISOString());
    else if (value instanceof Uint8Array) values.push(value);
    else return undefined;
  }
  return values;
}

/**
 * Runs a statement with parameters as one message (parse, bind, describe, execute, sync): one
 * call into the WebAssembly module where `PGlite.query` makes six. The statement is prepared under
 * a name of its own the first time, and later runs skip the server's parse, analysis and (once it
 * keeps a generic plan) planning. The answer is read by PGlite's own parser, as `query`'s is.
 */
export async function runPrepared<R>(
  pglite: PGlite,
  statements: PreparedStatements,
  searchPath: string | undefined,
  text: string,
  values: WireValue[],
): Promise<Results<R>> {
  const key = `${searchPath ?? ""}\u0000${text}`;
  try {
    return await runOnce<R>(pglite, statements, key, text, values);
  } catch (err) {
    // A table changed under a prepared statement whose result type it fixed (a migration added a
    // column under a `select *`): the server refused before running it, so it runs again afresh.
    if (!(err instanceof Error) || err.message !== RESULT_TYPE_CHANGED) throw err;
    return runOnce<R>(pglite, statements, key, text, values);
  }
}

async function runOnce<R>(
  pglite: PGlite,
  statements: PreparedStatements,
  key: string,
  text: string,
  values: WireValue[],
): Promise<Results<R>> {
  const { serialize } = protocol;
  const { byText, toClose } = statements;
  const closing = toClose.splice(0);
  let name = byText.get(key);
  const prepare = name === undefined;
  if (name !== undefined) {
    // Most recently used last, so the first is the one to evict.
    byText.delete(key);
    byText.set(key, name);
  } else {
    name = `aiem_${statements.next++}`;
    byText.set(key, name);
    if (byText.size > MAX_PREPARED) {
      const [oldest, oldestName] = byText.entries().next().value as [string, string];
      byText.delete(oldest);
      closing.push(oldestName);
    }
  }
  const parts = closing.map((closed) => serialize.close({ type: "S", name: closed }));
  if (prepare) parts.push(serialize.parse({ text, name }));
  parts.push(
    serialize.bind({ statement: name, values }),
    serialize.describe({ type: "P" }),
    serialize.execute({}),
    serialize.sync(),
  );
  try {
    const { messages } = await pglite.execProtocol(concat(parts));
    return pgliteParse.parseResults(messages, pglite.parsers)[0] as Results<R>;
  } catch (err) {
    // Whether the failure came before or after the statement was prepared, it is prepared afresh
    // next time; the closes the failure may have skipped are sent again (closing one that does
    // not exist is no error).
    if (byText.get(key) === name) byText.delete(key);
    toClose.push(...closing, name);
    throw err;
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const message = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0));
  let at = 0;
  for (const part of parts) {
    message.set(part, at);
    at += part.byteLength;
  }
  return message;
}

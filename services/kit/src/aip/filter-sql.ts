// Compiles a parsed AIP-160 filter to a parameterised SQL condition over a field table. Field
// names resolve only through the table; every value is bound; LIKE patterns are escaped.
import { type Expression, type RawBuilder, type SqlBool, sql } from "kysely";
import { invalidArgument, quote } from "../errors.js";
import {
  type FieldSpec,
  type FieldTable,
  bindValue,
  lookupField,
  parseDuration,
  parseInt64,
  parseTimestamp,
} from "./fields.js";
import { type Comparator, type FilterNode, type FilterValue, formatFilter, parseFilter } from "./filter-parser.js";

function fail(pos: number, message: string): never {
  throw invalidArgument("filter", `${message} at position ${pos}`);
}

const SQL_OP: Record<Exclude<Comparator, ":">, string> = {
  "=": "=",
  "!=": "<>",
  "<": "<",
  "<=": "<=",
  ">": ">",
  ">=": ">=",
};

/** Escapes LIKE metacharacters; patterns are used with ESCAPE '\'. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, "\\$&");
}

function filterableNames(table: FieldTable): string {
  return Object.keys(table)
    .filter((k) => table[k]!.filterable !== false)
    .join(", ");
}

// A comparison that is true, or false when the column is NULL (never NULL itself).
function positive(spec: FieldSpec, cmp: RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  return spec.nullable ? sql<SqlBool>`(${spec.sql} IS NOT NULL AND ${cmp})` : cmp;
}

// A "not equal" comparison that counts NULL (an unset field) as different from every value.
function negative(spec: FieldSpec, cmp: RawBuilder<SqlBool>): RawBuilder<SqlBool> {
  return spec.nullable ? sql<SqlBool>`(${spec.sql} IS NULL OR ${cmp})` : cmp;
}

function compare(spec: FieldSpec, op: Comparator, bound: RawBuilder<unknown>): RawBuilder<SqlBool> {
  const sqlOp = SQL_OP[op === ":" ? "=" : op];
  const cmp = sql<SqlBool>`${spec.sql} ${sql.raw(sqlOp)} ${bound}`;
  return op === "!=" ? negative(spec, cmp) : positive(spec, cmp);
}

function compileValue(
  name: string,
  spec: FieldSpec,
  op: Comparator,
  opPos: number,
  v: FilterValue,
): RawBuilder<SqlBool> {
  // `field:*` asks whether the field is set (AIP-160 presence).
  if (op === ":" && v.prefixWildcard && !v.suffixWildcard && v.text === "") {
    return spec.type === "string"
      ? sql<SqlBool>`(${spec.sql} IS NOT NULL AND ${spec.sql} <> ${""})`
      : sql<SqlBool>`(${spec.sql} IS NOT NULL)`;
  }
  if (v.strayWildcard) {
    fail(
      v.strayWildcard,
      "a wildcard * is only allowed at the start or end of a value (write \\* in a quoted string for a literal star)",
    );
  }
  const wildcard = v.prefixWildcard || v.suffixWildcard;
  if (wildcard && !(spec.type === "string" && (op === "=" || op === "!="))) {
    fail(v.pos, `wildcards only work with = and != on text fields, not with ${op} on ${quote(name)}`);
  }
  switch (spec.type) {
    case "string": {
      if (wildcard) {
        const pattern = `${v.prefixWildcard ? "%" : ""}${escapeLike(v.text)}${v.suffixWildcard ? "%" : ""}`;
        return op === "="
          ? positive(spec, sql<SqlBool>`${spec.sql} LIKE ${pattern} ESCAPE '\\'`)
          : negative(spec, sql<SqlBool>`${spec.sql} NOT LIKE ${pattern} ESCAPE '\\'`);
      }
      if (op === ":") return positive(spec, sql<SqlBool>`${spec.sql} LIKE ${`%${escapeLike(v.text)}%`} ESCAPE '\\'`);
      return compare(spec, op, bindValue(spec, v.text));
    }
    case "int": {
      const n = parseInt64(v.text);
      if (n === undefined) {
        fail(
          v.pos,
          /^[+-]?[0-9]+$/.test(v.text)
            ? `${quote(v.text)} is out of range for ${quote(name)} (a 64-bit integer)`
            : `${quote(name)} needs an integer, not ${quote(v.text)}`,
        );
      }
      return compare(spec, op, bindValue(spec, n.toString()));
    }
    case "duration": {
      const d = parseDuration(v.text, spec.durationUnit ?? "ms");
      if (typeof d === "string") fail(v.pos, `${quote(name)}: ${d}, not ${quote(v.text)}`);
      return compare(spec, op, bindValue(spec, d.toString()));
    }
    case "timestamp": {
      const t = parseTimestamp(v.text);
      if (t === undefined) {
        fail(v.pos, `${quote(name)} needs an RFC 3339 timestamp such as "2024-05-01T12:00:00Z", not ${quote(v.text)}`);
      }
      return compare(spec, op, bindValue(spec, t));
    }
    case "bool": {
      if (op !== "=" && op !== "!=" && op !== ":")
        fail(opPos, `${op} does not apply to the boolean field ${quote(name)}`);
      const lower = v.text.toLowerCase();
      if (lower !== "true" && lower !== "false")
        fail(v.pos, `${quote(name)} needs true or false, not ${quote(v.text)}`);
      return compare(spec, op, bindValue(spec, lower === "true"));
    }
    case "enum": {
      if (op !== "=" && op !== "!=" && op !== ":") fail(opPos, `${op} does not apply to the enum field ${quote(name)}`);
      const values = spec.enumValues ?? [];
      if (!values.includes(v.text)) {
        fail(v.pos, `${quote(v.text)} is not a value of ${quote(name)}; use one of ${values.join(", ")}`);
      }
      return compare(spec, op, bindValue(spec, v.text));
    }
  }
}

function compileArg(
  name: string,
  spec: FieldSpec,
  op: Comparator,
  opPos: number,
  arg: FilterNode,
): RawBuilder<SqlBool> {
  switch (arg.kind) {
    case "value":
      return compileValue(name, spec, op, opPos, arg);
    case "and":
      return sql<SqlBool>`(${sql.join(
        arg.children.map((c) => compileArg(name, spec, op, opPos, c)),
        sql` AND `,
      )})`;
    case "or":
      return sql<SqlBool>`(${sql.join(
        arg.children.map((c) => compileArg(name, spec, op, opPos, c)),
        sql` OR `,
      )})`;
    case "not":
      return sql<SqlBool>`(NOT ${compileArg(name, spec, op, opPos, arg.child)})`;
    case "compare":
      return fail(arg.pos, "a comparison cannot be used as a value");
  }
}

function compileNode(node: FilterNode, table: FieldTable): RawBuilder<SqlBool> {
  switch (node.kind) {
    case "and":
      return sql<SqlBool>`(${sql.join(
        node.children.map((c) => compileNode(c, table)),
        sql` AND `,
      )})`;
    case "or":
      return sql<SqlBool>`(${sql.join(
        node.children.map((c) => compileNode(c, table)),
        sql` OR `,
      )})`;
    case "not":
      return sql<SqlBool>`(NOT ${compileNode(node.child, table)})`;
    case "compare": {
      const spec = lookupField(table, node.field);
      if (!spec || spec.filterable === false) {
        fail(node.pos, `unknown field ${quote(node.field)}; filter on ${filterableNames(table)}`);
      }
      return compileArg(node.field, spec, node.op, node.opPos, node.arg);
    }
    case "value":
      return fail(node.pos, "expected a comparison such as field = value");
  }
}

/** Compiles a parsed filter; undefined (no condition) for an empty filter. */
export function compileFilter(node: FilterNode | undefined, table: FieldTable): Expression<SqlBool> | undefined {
  return node ? compileNode(node, table) : undefined;
}

export interface CompiledFilter {
  /** The SQL condition, undefined when the filter is empty. */
  readonly where: Expression<SqlBool> | undefined;
  /** The canonical text of the filter (see formatFilter), "" when empty. */
  readonly canonical: string;
}

/** Parses and compiles in one step. Throws INVALID_ARGUMENT naming `filter` and the position. */
export function filterToSql(filter: string | undefined, table: FieldTable): CompiledFilter {
  const ast = parseFilter(filter);
  return { where: compileFilter(ast, table), canonical: formatFilter(ast) };
}

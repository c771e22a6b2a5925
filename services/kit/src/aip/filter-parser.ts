// AIP-160 filter syntax: a lexer and a recursive-descent parser producing an AST with positions.
// Grammar (after AIP-160, restricted to what the API supports):
//   filter      = [expression]
//   expression  = sequence {"AND" sequence}
//   sequence    = factor {factor}                 adjacent factors mean AND
//   factor      = term {"OR" term}                OR binds tighter than AND
//   term        = ["NOT" | "-"] simple
//   simple      = "(" expression ")" | restriction
//   restriction = field comparator arg           a bare value (global search) is not supported
//   arg         = value | "(" value-expression ")"   e.g. state = (STATE_RUNNING OR STATE_PAUSED)
// Keywords are upper case. Values are bare words or quoted strings ('...' or "..."); in strings
// \\ \" \' \n \r \t and \* (a literal star) are the escapes. Positions are 1-based character offsets.
import { invalidArgument } from "../errors.js";

export const MAX_FILTER_BYTES = 4096;
export const MAX_FILTER_DEPTH = 32;
export const MAX_FILTER_NODES = 200;

export type Comparator = "=" | "!=" | "<" | "<=" | ">" | ">=" | ":";

/** A literal value. Wildcard stars at either end are taken off `text` and recorded as flags. */
export interface FilterValue {
  readonly kind: "value";
  readonly pos: number;
  readonly text: string;
  readonly quoted: boolean;
  readonly prefixWildcard: boolean;
  readonly suffixWildcard: boolean;
  /** Position of an unescaped `*` that is not at either end, 0 when there is none. */
  readonly strayWildcard: number;
}

export interface FilterAnd {
  readonly kind: "and";
  readonly pos: number;
  readonly children: readonly FilterNode[];
}

export interface FilterOr {
  readonly kind: "or";
  readonly pos: number;
  readonly children: readonly FilterNode[];
}

export interface FilterNot {
  readonly kind: "not";
  readonly pos: number;
  readonly child: FilterNode;
}

export interface FilterCompare {
  readonly kind: "compare";
  readonly pos: number;
  readonly field: string;
  readonly op: Comparator;
  readonly opPos: number;
  /** A value, or AND/OR/NOT over values meaning the same comparison with each of them. */
  readonly arg: FilterNode;
}

export type FilterNode = FilterAnd | FilterOr | FilterNot | FilterCompare | FilterValue;

enum T {
  LParen,
  RParen,
  Op,
  And,
  Or,
  Not,
  Minus,
  Text,
  Str,
  Comma,
  End,
}

interface Token {
  readonly type: T;
  /** 0-based offset of the first character. */
  readonly pos: number;
  readonly end: number;
  readonly op?: Comparator;
  readonly text?: string;
  readonly value?: FilterValue;
}

function fail(pos0: number, message: string): never {
  throw invalidArgument("filter", `${message} at position ${pos0 + 1}`);
}

// Bare words: identifiers, numbers, enum names, durations, unquoted wildcards, paths.
function isWordChar(c: number): boolean {
  return (
    (c >= 97 && c <= 122) || // a-z
    (c >= 65 && c <= 90) || // A-Z
    (c >= 48 && c <= 57) || // 0-9
    c === 95 || // _
    c === 46 || // .
    c === 45 || // -
    c === 42 || // *
    c === 47 || // /
    c === 64 // @
  );
}

// Unquoted RFC 3339 timestamps hold `:`, which would otherwise lex as the has-operator.
const TIMESTAMP_AT = /\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})/y;

function wordValue(raw: string, pos0: number): FilterValue {
  let prefix = false;
  let suffix = false;
  let stray = 0;
  let start = 0;
  let end = raw.length;
  if (raw.charCodeAt(0) === 42) {
    prefix = true;
    start = 1;
  }
  if (end > start && raw.charCodeAt(end - 1) === 42) {
    suffix = true;
    end--;
  }
  const inner = raw.indexOf("*", start);
  if (inner !== -1 && inner < end) stray = pos0 + inner + 1;
  return {
    kind: "value",
    pos: pos0 + 1,
    text: raw.slice(start, end),
    quoted: false,
    prefixWildcard: prefix,
    suffixWildcard: suffix,
    strayWildcard: stray,
  };
}

function lexString(input: string, start: number): { value: FilterValue; end: number } {
  const quote = input.charCodeAt(start);
  const chars: string[] = [];
  // Offsets (into `chars`) and input positions of unescaped stars.
  const stars: Array<[number, number]> = [];
  let i = start + 1;
  for (;;) {
    if (i >= input.length) fail(start, "unterminated string");
    const c = input.charCodeAt(i);
    if (c === quote) break;
    if (c === 92) {
      const e = input[i + 1];
      switch (e) {
        case "\\":
        case '"':
        case "'":
        case "*":
          chars.push(e);
          break;
        case "n":
          chars.push("\n");
          break;
        case "r":
          chars.push("\r");
          break;
        case "t":
          chars.push("\t");
          break;
        case undefined:
          return fail(start, "unterminated string");
        default:
          fail(i, `unknown escape \\${e} in a string (use \\\\ for a backslash)`);
      }
      i += 2;
      continue;
    }
    if (c === 42) stars.push([chars.length, i]);
    chars.push(input[i]!);
    i++;
  }
  let prefix = false;
  let suffix = false;
  let stray = 0;
  let from = 0;
  let to = chars.length;
  for (const [at, inputPos] of stars) {
    if (at === 0 && !prefix) {
      prefix = true;
      from = 1;
    } else if (at === chars.length - 1 && at >= from) {
      suffix = true;
      to = chars.length - 1;
    } else if (stray === 0) {
      stray = inputPos + 1;
    }
  }
  return {
    value: {
      kind: "value",
      pos: start + 1,
      text: chars.slice(from, to).join(""),
      quoted: true,
      prefixWildcard: prefix,
      suffixWildcard: suffix,
      strayWildcard: stray,
    },
    end: i + 1,
  };
}

function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = input.length;
  while (i < n) {
    const c = input.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13) {
      i++;
      continue;
    }
    const start = i;
    switch (c) {
      case 40:
        tokens.push({ type: T.LParen, pos: i, end: ++i });
        continue;
      case 41:
        tokens.push({ type: T.RParen, pos: i, end: ++i });
        continue;
      case 44:
        tokens.push({ type: T.Comma, pos: i, end: ++i });
        continue;
      case 61: // = (and ==, which the official Python client's documentation uses for equality)
        i += input.charCodeAt(i + 1) === 61 ? 2 : 1;
        tokens.push({ type: T.Op, pos: start, end: i, op: "=" });
        continue;
      case 58: // :
        tokens.push({ type: T.Op, pos: i, end: ++i, op: ":" });
        continue;
      case 33: // !
        if (input.charCodeAt(i + 1) !== 61) fail(i, "unexpected ! (use != or NOT)");
        i += 2;
        tokens.push({ type: T.Op, pos: start, end: i, op: "!=" });
        continue;
      case 60: // <
      case 62: {
        // >
        const eq = input.charCodeAt(i + 1) === 61;
        const op: Comparator = c === 60 ? (eq ? "<=" : "<") : eq ? ">=" : ">";
        i += eq ? 2 : 1;
        tokens.push({ type: T.Op, pos: start, end: i, op });
        continue;
      }
      case 34:
      case 39: {
        const s = lexString(input, i);
        tokens.push({ type: T.Str, pos: start, end: s.end, value: s.value });
        i = s.end;
        continue;
      }
      case 45: {
        // A minus before a digit is a negative number; otherwise it negates the term after it.
        const next = input.charCodeAt(i + 1);
        if (!(next >= 48 && next <= 57)) {
          tokens.push({ type: T.Minus, pos: i, end: ++i });
          continue;
        }
        break;
      }
    }
    if (c >= 48 && c <= 57) {
      TIMESTAMP_AT.lastIndex = i;
      const m = TIMESTAMP_AT.exec(input);
      if (m) {
        i += m[0].length;
        tokens.push({ type: T.Text, pos: start, end: i, text: m[0], value: wordValue(m[0], start) });
        continue;
      }
    }
    if (!isWordChar(c)) {
      const ch = String.fromCodePoint(input.codePointAt(i)!);
      fail(i, `unexpected character ${JSON.stringify(ch)} (quote values that hold it)`);
    }
    i++;
    while (i < n && isWordChar(input.charCodeAt(i))) i++;
    const text = input.slice(start, i);
    if (text === "AND") tokens.push({ type: T.And, pos: start, end: i });
    else if (text === "OR") tokens.push({ type: T.Or, pos: start, end: i });
    else if (text === "NOT") tokens.push({ type: T.Not, pos: start, end: i });
    else tokens.push({ type: T.Text, pos: start, end: i, text, value: wordValue(text, start) });
  }
  tokens.push({ type: T.End, pos: n, end: n });
  return tokens;
}

function describe(tok: Token, input: string): string {
  switch (tok.type) {
    case T.End:
      return "the end of the filter";
    case T.Str:
      return "a string";
    default:
      return JSON.stringify(input.slice(tok.pos, tok.end));
  }
}

const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

class Parser {
  private i = 0;
  private nodes = 0;

  constructor(
    private readonly input: string,
    private readonly tokens: Token[],
  ) {}

  parse(): FilterNode | undefined {
    if (this.peek().type === T.End) return undefined;
    const node = this.expression(0, false);
    const tok = this.peek();
    if (tok.type !== T.End) {
      if (tok.type === T.RParen) fail(tok.pos, "unmatched )");
      fail(tok.pos, `unexpected ${describe(tok, this.input)}`);
    }
    return node;
  }

  private peek(): Token {
    return this.tokens[this.i]!;
  }

  private next(): Token {
    return this.tokens[this.i++]!;
  }

  private count(pos0: number): void {
    if (++this.nodes > MAX_FILTER_NODES) fail(pos0, `more than ${MAX_FILTER_NODES} terms and operators`);
  }

  /**
   * One `part`, or a `kind` node of the parts that follow it, each after a `separator` token
   * (or, without one, each where a term starts).
   */
  private joined(kind: "and" | "or", separator: T | undefined, part: () => FilterNode): FilterNode {
    const more = () => (separator === undefined ? this.startsTerm() : this.accept(separator));
    const start = this.peek();
    const first = part();
    if (!more()) return first;
    const children = [first, part()];
    while (more()) children.push(part());
    this.count(start.pos);
    return { kind, pos: start.pos + 1, children };
  }

  /** Takes the next token when it is of `type`. */
  private accept(type: T): boolean {
    if (this.peek().type !== type) return false;
    this.next();
    return true;
  }

  private expression(depth: number, values: boolean): FilterNode {
    return this.joined("and", T.And, () => this.sequence(depth, values));
  }

  /** Terms side by side, which AIP-160 reads as AND. */
  private sequence(depth: number, values: boolean): FilterNode {
    return this.joined("and", undefined, () => this.factor(depth, values));
  }

  private startsTerm(): boolean {
    const t = this.peek().type;
    return t === T.LParen || t === T.Not || t === T.Minus || t === T.Text || t === T.Str;
  }

  private factor(depth: number, values: boolean): FilterNode {
    return this.joined("or", T.Or, () => this.term(depth, values));
  }

  private term(depth: number, values: boolean): FilterNode {
    const tok = this.peek();
    if (tok.type === T.Not || tok.type === T.Minus) {
      this.next();
      if (depth + 1 > MAX_FILTER_DEPTH) fail(tok.pos, `nested deeper than ${MAX_FILTER_DEPTH} levels`);
      const after = this.peek();
      if (
        !(
          after.type === T.LParen ||
          after.type === T.Text ||
          after.type === T.Str ||
          after.type === T.Not ||
          after.type === T.Minus
        )
      ) {
        fail(
          after.pos,
          `expected a term after ${tok.type === T.Not ? "NOT" : "-"}, found ${describe(after, this.input)}`,
        );
      }
      const child = this.term(depth + 1, values);
      this.count(tok.pos);
      return { kind: "not", pos: tok.pos + 1, child };
    }
    return this.simple(depth, values);
  }

  private simple(depth: number, values: boolean): FilterNode {
    const tok = this.peek();
    if (tok.type === T.LParen) {
      this.next();
      if (depth + 1 > MAX_FILTER_DEPTH) fail(tok.pos, `nested deeper than ${MAX_FILTER_DEPTH} levels`);
      if (this.peek().type === T.RParen) fail(this.peek().pos, "empty parentheses");
      const inner = this.expression(depth + 1, values);
      const close = this.peek();
      if (close.type !== T.RParen) {
        fail(close.pos, `expected ) to close the ( at position ${tok.pos + 1}, found ${describe(close, this.input)}`);
      }
      this.next();
      return inner;
    }
    return values ? this.value() : this.restriction(depth);
  }

  private restriction(depth: number): FilterNode {
    const tok = this.next();
    if (tok.type === T.Str)
      fail(tok.pos, "expected a field name, found a string (a filter compares fields: field = value)");
    if (tok.type !== T.Text) fail(tok.pos, `expected a field name, found ${describe(tok, this.input)}`);
    const name = tok.text!;
    if (!FIELD_NAME.test(name)) fail(tok.pos, `expected a field name, found ${JSON.stringify(name)}`);
    const opTok = this.peek();
    if (opTok.type !== T.Op) {
      const lower = name.toLowerCase();
      if (name !== name.toUpperCase() && (lower === "and" || lower === "or" || lower === "not")) {
        fail(tok.pos, `keywords are upper case: write ${name.toUpperCase()}`);
      }
      if (opTok.type === T.LParen && opTok.pos === tok.end) fail(tok.pos, "functions are not supported");
      fail(
        opTok.pos,
        `expected a comparison operator (=, !=, <, <=, >, >=, :) after ${JSON.stringify(name)}, found ${describe(opTok, this.input)}`,
      );
    }
    this.next();
    const argTok = this.peek();
    const arg = argTok.type === T.LParen ? this.simple(depth, true) : this.value();
    this.count(tok.pos);
    return { kind: "compare", pos: tok.pos + 1, field: name, op: opTok.op!, opPos: opTok.pos + 1, arg };
  }

  private value(): FilterValue {
    const tok = this.next();
    if (tok.type === T.Text || tok.type === T.Str) {
      this.count(tok.pos);
      return tok.value!;
    }
    if (tok.type === T.Minus) {
      const after = this.peek();
      if (after.type === T.Text && after.pos === tok.end) {
        this.next();
        this.count(tok.pos);
        return wordValue(`-${after.text!}`, tok.pos);
      }
    }
    if (tok.type === T.Op) fail(tok.pos, `unexpected ${describe(tok, this.input)} where a value was expected`);
    fail(tok.pos, `expected a value, found ${describe(tok, this.input)}`);
  }
}

/**
 * Parses an AIP-160 filter. Returns undefined for an empty or all-blank filter. Throws
 * INVALID_ARGUMENT naming `filter` and the position of the problem.
 */
export function parseFilter(input: string | undefined): FilterNode | undefined {
  if (input === undefined || input === "") return undefined;
  if (input.length > MAX_FILTER_BYTES || Buffer.byteLength(input, "utf8") > MAX_FILTER_BYTES) {
    throw invalidArgument("filter", `is longer than ${MAX_FILTER_BYTES} bytes`);
  }
  return new Parser(input, lex(input)).parse();
}

function formatValue(v: FilterValue): string {
  const body = JSON.stringify(v.text).slice(1, -1).replace(/\*/g, "\\*");
  return `"${v.prefixWildcard ? "*" : ""}${body}${v.suffixWildcard ? "*" : ""}"`;
}

function formatNode(node: FilterNode, parent: FilterNode["kind"] | "top"): string {
  switch (node.kind) {
    case "value":
      return formatValue(node);
    case "compare": {
      const arg = node.arg.kind === "value" ? formatValue(node.arg) : `(${formatNode(node.arg, "top")})`;
      return `${node.field} ${node.op} ${arg}`;
    }
    case "not": {
      const inner = formatNode(node.child, "not");
      return `NOT ${inner}`;
    }
    case "and": {
      const text = node.children.map((c) => formatNode(c, "and")).join(" AND ");
      return parent === "top" ? text : `(${text})`;
    }
    case "or": {
      const text = node.children.map((c) => formatNode(c, "or")).join(" OR ");
      return parent === "top" || parent === "and" ? text : `(${text})`;
    }
  }
}

/**
 * A canonical text of a parsed filter: every value quoted, redundant parentheses and whitespace
 * gone. Equal filters written differently format the same, so page tokens survive reformatting.
 */
export function formatFilter(node: FilterNode | undefined): string {
  return node ? formatNode(node, "top") : "";
}

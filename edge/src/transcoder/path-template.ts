// Parses the path templates of `google.api.http` rules (the grammar in google/api/http.proto):
//
//   Template = "/" Segments [ Verb ] ;
//   Segments = Segment { "/" Segment } ;
//   Segment  = "*" | "**" | LITERAL | Variable ;
//   Variable = "{" FieldPath [ "=" Segments ] "}" ;
//   Verb     = ":" LITERAL ;
//
// A variable's segments are flattened into the template, so matching only ever deals with a
// flat list of literal / `*` / `**` segments, and a variable is a range of that list.

export type TemplateSegment =
  | { readonly kind: "literal"; readonly value: string }
  | { readonly kind: "star" }
  | { readonly kind: "dstar" };

export interface TemplateVariable {
  /** The request field path, proto names (`dai_engine.name`). */
  readonly fieldPath: readonly string[];
  /** First template segment of the variable. */
  readonly start: number;
  /** One past its last template segment; a `**` at `end - 1` takes every remaining URL segment. */
  readonly end: number;
  /**
   * `{var}` / `{var=*}` capture one segment and are fully percent-decoded; anything wider keeps
   * `%2F` as is so a decoded value never gains a `/` the caller did not write as a separator.
   */
  readonly multiSegment: boolean;
}

export interface PathTemplate {
  readonly source: string;
  readonly segments: readonly TemplateSegment[];
  readonly variables: readonly TemplateVariable[];
  /** The custom verb without its colon, or "" when there is none. */
  readonly verb: string;
}

export class PathTemplateError extends Error {
  constructor(source: string, reason: string) {
    super(`invalid http path template "${source}": ${reason}`);
  }
}

const fieldPathPattern = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export function parsePathTemplate(source: string): PathTemplate {
  const fail = (reason: string): never => {
    throw new PathTemplateError(source, reason);
  };
  if (!source.startsWith("/")) fail("must start with /");

  // The verb is a colon after the last segment; colons inside braces belong to nothing (they are
  // not allowed) and a colon in an earlier segment is part of a literal.
  let body = source.slice(1);
  let verb = "";
  const lastSlash = body.lastIndexOf("/");
  const lastClose = body.lastIndexOf("}");
  const colon = body.indexOf(":", Math.max(lastSlash, lastClose) + 1);
  if (colon >= 0) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
    if (verb === "" || verb.includes("/")) fail("empty or malformed verb");
  }

  const segments: TemplateSegment[] = [];
  const variables: TemplateVariable[] = [];
  const seen = new Set<string>();
  let i = 0;
  const pushPlain = (raw: string): void => {
    if (raw === "*") segments.push({ kind: "star" });
    else if (raw === "**") segments.push({ kind: "dstar" });
    else if (raw === "" || /[{}=*]/.test(raw)) fail(`bad segment "${raw}"`);
    else segments.push({ kind: "literal", value: raw });
  };
  while (i <= body.length) {
    if (body[i] === "{") {
      const close = body.indexOf("}", i);
      if (close < 0) fail("unclosed {");
      const inner = body.slice(i + 1, close);
      if (inner.includes("{")) fail("nested variables");
      const eq = inner.indexOf("=");
      const path = eq < 0 ? inner : inner.slice(0, eq);
      const sub = eq < 0 ? "*" : inner.slice(eq + 1);
      if (!fieldPathPattern.test(path)) fail(`bad field path "${path}"`);
      if (seen.has(path)) fail(`field "${path}" bound twice`);
      seen.add(path);
      const start = segments.length;
      for (const part of sub.split("/")) pushPlain(part);
      const end = segments.length;
      const only = segments[start];
      variables.push({
        fieldPath: path.split("."),
        start,
        end,
        multiSegment: end - start !== 1 || only?.kind !== "star",
      });
      i = close + 1;
      if (i < body.length && body[i] !== "/") fail("a variable must end its segment");
      i++;
    } else {
      let next = body.indexOf("/", i);
      if (next < 0) next = body.length;
      pushPlain(body.slice(i, next));
      i = next + 1;
    }
  }
  segments.forEach((s, index) => {
    if (s.kind === "dstar" && index !== segments.length - 1) fail("** must be the last segment");
  });
  return { source, segments, variables, verb };
}

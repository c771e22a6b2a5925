// A trie over path-template segments, built once at start-up. Matching walks raw (still
// percent-encoded) URL segments, so an encoded `%2F` never splits a segment.
import type { PathTemplate } from "./path-template.js";

interface TrieNode<R> {
  readonly literals: Map<string, TrieNode<R>>;
  star: TrieNode<R> | undefined;
  /** Where a trailing `**` ends; it takes zero or more remaining segments. */
  dstar: TrieNode<R> | undefined;
  /** verb ("" for none) -> HTTP method -> route */
  readonly ends: Map<string, Map<string, R>>;
}

export type TrieMatch<R> =
  | { readonly kind: "found"; readonly route: R; readonly segments: readonly string[] }
  | { readonly kind: "method"; readonly allowed: readonly string[] }
  | { readonly kind: "none" };

const none = { kind: "none" } as const;
const encodedSlash = /%2F/i;

function createNode<R>(): TrieNode<R> {
  return { literals: new Map(), star: undefined, dstar: undefined, ends: new Map() };
}

export interface RouteTrie<R> {
  add(httpMethod: string, template: PathTemplate, route: R): void;
  /** `path` is the raw URL path (no query), starting with "/". */
  match(httpMethod: string, path: string): TrieMatch<R>;
}

export function createRouteTrie<R>(describe: (route: R) => string): RouteTrie<R> {
  const root = createNode<R>();
  const verbs = new Set<string>();

  function add(httpMethod: string, template: PathTemplate, route: R): void {
    let node = root;
    for (const segment of template.segments) {
      if (segment.kind === "literal") {
        let next = node.literals.get(segment.value);
        if (!next) {
          next = createNode();
          node.literals.set(segment.value, next);
        }
        node = next;
      } else if (segment.kind === "star") {
        node = node.star ??= createNode();
      } else {
        node = node.dstar ??= createNode();
      }
    }
    if (template.verb) verbs.add(template.verb);
    let byMethod = node.ends.get(template.verb);
    if (!byMethod) {
      byMethod = new Map();
      node.ends.set(template.verb, byMethod);
    }
    const clash = byMethod.get(httpMethod);
    if (clash !== undefined) {
      throw new Error(
        `http rule ${httpMethod} ${template.source} of ${describe(route)} clashes with ${describe(clash)}`,
      );
    }
    byMethod.set(httpMethod, route);
  }

  function match(httpMethod: string, path: string): TrieMatch<R> {
    const asSent = matchSegments(httpMethod, path.slice(1).split("/"));
    if (asSent.kind === "found" || !encodedSlash.test(path)) return asSent;
    // Clients that quote a whole resource name as one path parameter (the official Python client
    // does) send `workspaces%2Fw%2FdaiEngines%2Fe`; like the gateway the real product runs, read
    // such a path with its `%2F` as separators when it matches no route as sent.
    const asSeparators = matchSegments(httpMethod, path.slice(1).split(/\/|%2F/i));
    return asSeparators.kind === "none" ? asSent : asSeparators;
  }

  function matchSegments(httpMethod: string, segments: string[]): TrieMatch<R> {
    const last = segments[segments.length - 1] ?? "";
    const colon = last.lastIndexOf(":");
    // A colon in the last segment starts a verb only when that verb is declared and the rest of
    // the path leads to a route with it; otherwise the colon is part of the value
    // (`daiEngines/a:b`).
    if (colon >= 0) {
      const verb = safeDecode(last.slice(colon + 1));
      if (verb !== undefined && verbs.has(verb)) {
        const stripped = segments.slice(0, -1);
        stripped.push(last.slice(0, colon));
        const withVerb = search(httpMethod, stripped, verb);
        if (withVerb.kind !== "none") return withVerb;
      }
    }
    return search(httpMethod, segments, "");
  }

  function search(httpMethod: string, segments: string[], verb: string): TrieMatch<R> {
    const allowed = new Set<string>();
    const found = walk(root, 0, segments, verb, httpMethod, allowed);
    if (found !== undefined) return { kind: "found", route: found, segments };
    if (allowed.size > 0) return { kind: "method", allowed: [...allowed].sort() };
    return none;
  }

  // Depth first, literals before `*` before `**`, so the most specific template wins; every
  // template that matches the path but not the method adds to `allowed` for a 405.
  function walk(
    node: TrieNode<R>,
    index: number,
    segments: readonly string[],
    verb: string,
    httpMethod: string,
    allowed: Set<string>,
  ): R | undefined {
    if (index === segments.length) {
      const hit = atEnd(node, verb, httpMethod, allowed);
      if (hit !== undefined) return hit;
      return node.dstar ? atEnd(node.dstar, verb, httpMethod, allowed) : undefined;
    }
    const segment = segments[index]!;
    let literal = node.literals.get(segment);
    if (literal === undefined && segment.includes("%")) {
      const decoded = safeDecode(segment);
      if (decoded !== undefined) literal = node.literals.get(decoded);
    }
    if (literal) {
      const hit = walk(literal, index + 1, segments, verb, httpMethod, allowed);
      if (hit !== undefined) return hit;
    }
    if (node.star && segment !== "") {
      const hit = walk(node.star, index + 1, segments, verb, httpMethod, allowed);
      if (hit !== undefined) return hit;
    }
    if (node.dstar) return atEnd(node.dstar, verb, httpMethod, allowed);
    return undefined;
  }

  function atEnd(node: TrieNode<R>, verb: string, httpMethod: string, allowed: Set<string>): R | undefined {
    const byMethod = node.ends.get(verb);
    if (!byMethod) return undefined;
    const hit = byMethod.get(httpMethod);
    if (hit !== undefined) return hit;
    for (const m of byMethod.keys()) allowed.add(m);
    return undefined;
  }

  return { add, match };
}

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

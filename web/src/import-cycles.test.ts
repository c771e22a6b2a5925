// The docs app's modules form no import circle (static or dynamic imports), so a page never
// depends on itself through navigation and the route table.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = dirname(fileURLToPath(import.meta.url));

function importsOf(file: string): string[] {
  const source = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of source.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    const target = resolve(dirname(file), match[1]!);
    const candidates = [target.replace(/\.js$/, ".ts"), target.replace(/\.js$/, ".tsx"), target];
    const hit = candidates.find((c) => existsSync(c));
    if (hit) found.push(hit);
  }
  return found;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

describe("web/src imports", () => {
  it("have no circle", () => {
    const cycles: string[] = [];
    const done = new Set<string>();
    const stack: string[] = [];
    const visit = (file: string) => {
      const at = stack.indexOf(file);
      if (at >= 0) {
        cycles.push([...stack.slice(at), file].map((f) => relative(root, f)).join(" -> "));
        return;
      }
      if (done.has(file)) return;
      stack.push(file);
      for (const next of importsOf(file)) visit(next);
      stack.pop();
      done.add(file);
    };
    for (const file of sources(root)) visit(file);
    expect(cycles).toEqual([]);
  });
});

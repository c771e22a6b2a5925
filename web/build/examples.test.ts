// The Python examples the guides include must keep matching the real client: they compile, and
// every client, method and keyword argument they use exists in clients/python. This catches a
// renamed method long before someone runs the examples against a server.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { findPythonPackage, readPythonPackage, type PyClass, type PyFunction } from "./py-reference.js";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const examplesDir = fileURLToPath(new URL("../content/py/examples", import.meta.url));
const examples = readdirSync(examplesDir).filter((f) => f.endsWith(".py"));
const packageDir = findPythonPackage(repoRoot, "");

describe("the Python examples", () => {
  it.each(examples)("%s compiles", (file) => {
    execFileSync("python3", [
      "-c",
      "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])",
      `${examplesDir}/${file}`,
    ]);
  });

  it.skipIf(!packageDir).each(examples)("%s only calls what the client has", (file) => {
    const pkg = readPythonPackage(packageDir!);
    const classes = new Map<string, PyClass>();
    for (const m of pkg.modules) for (const c of m.classes) classes.set(c.name, c);
    const clients = classes.get("Clients")!;
    const typeOf = (annotation: string | null) => annotation?.replace(/['"]/g, "").split(/[\s|[\]]/)[0];
    const method = (cls: string, name: string): PyFunction | undefined => {
      for (let c = classes.get(cls); c; c = classes.get(c.bases[0] ?? "")) {
        const found = c.methods.find((m) => m.name === name);
        if (found) return found;
      }
      return undefined;
    };

    const source = readFileSync(`${examplesDir}/${file}`, "utf8");
    const vars = new Map<string, string>();
    const problems: string[] = [];
    const resolve = (expr: string): string | undefined => {
      const attr = /^clients\.(\w+)$/.exec(expr);
      if (attr) {
        const field = clients.attributes.find((a) => a.name === attr[1]);
        if (!field) problems.push(`Clients has no ${attr[1]}`);
        return typeOf(field?.annotation ?? null);
      }
      return vars.get(expr);
    };
    // Walk the script in order: assignments give variables their class, calls are checked.
    const args = String.raw`((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)`;
    const statement = new RegExp(
      String.raw`^(\w+) = ((?:clients\.)?\w+)(?:\.(\w+)\(${args}\))?$|((?:clients\.)?\w+)\.(\w+)\(${args}\)`,
      "gm",
    );
    for (const m of source.matchAll(statement)) {
      const [, target, receiver, called, callArgsOfAssignment, callReceiver, callName, callArgs] = m;
      const on = receiver ?? callReceiver!;
      const name = called ?? callName;
      const cls = resolve(on);
      if (!name) {
        if (target && cls) vars.set(target, cls);
        continue;
      }
      if (!cls) continue;
      const fn = method(cls, name);
      if (!fn) {
        problems.push(`${cls} has no method ${name}`);
        continue;
      }
      // Keyword arguments, not "x=" inside string literals.
      const argText = (callArgsOfAssignment ?? callArgs ?? "").replace(
        /[rbfu]?("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')/g,
        "''",
      );
      for (const kw of argText.matchAll(/(?:^|[(,\s])(\w+)=/g)) {
        if (!fn.params.some((p) => p.name === kw[1] || p.kind === "var_keyword"))
          problems.push(`${cls}.${name} has no parameter ${kw[1]}`);
      }
      const returned = typeOf(fn.returns);
      if (target && returned && classes.has(returned)) vars.set(target, returned);
    }
    expect(problems).toEqual([]);
  });
});

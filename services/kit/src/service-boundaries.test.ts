// What a service knows of another comes through the contract (the protos and their events), and
// what every service shares lives in this kit. So a service's own code imports no other service's
// package; only test infrastructure may, to run a real catalogue beside the service under test.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const servicesDir = resolve(fileURLToPath(import.meta.url), "..", "..", "..");
const shared = new Set(["kit", "proto"]);

function isTestInfrastructure(path: string): boolean {
  return /\.(test|suite)\.ts$/.test(path) || /(^|\/)testing(\.ts$|\/)/.test(path);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const services = readdirSync(servicesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== "kit")
  .map((entry) => entry.name);

describe("service boundaries", () => {
  it("finds the services", () => {
    expect(services).toEqual(expect.arrayContaining(["catalogue", "engine", "sandbox"]));
  });

  it.each(services)("%s imports no other service's package outside its tests", (service) => {
    const root = join(servicesDir, service);
    const offending: string[] = [];
    for (const file of sourceFiles(join(root, "src"))) {
      const rel = relative(root, file);
      if (isTestInfrastructure(rel)) continue;
      for (const match of readFileSync(file, "utf8").matchAll(/from\s+["']@aiem\/([a-z-]+)/g)) {
        const target = match[1]!;
        if (!shared.has(target) && target !== service) offending.push(`${rel} imports @aiem/${target}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it.each(services)("%s lists other services only as dev dependencies", (service) => {
    const manifest = JSON.parse(readFileSync(join(servicesDir, service, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const others = Object.keys(manifest.dependencies ?? {}).filter(
      (name) => name.startsWith("@aiem/") && !shared.has(name.slice("@aiem/".length)),
    );
    expect(others).toEqual([]);
  });
});

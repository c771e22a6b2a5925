import type { DescService, FileRegistry } from "@bufbuild/protobuf";

/** The parts of the product that can run as processes of their own. */
export const PARTS = ["catalogue", "engine", "sandbox"] as const;
export type PartName = (typeof PARTS)[number];

const publicPackages = new Set(["enginemanager.v1", "enginemanager.sandbox.v1"]);
const enginesV1 = new Set(["DAIEngineService", "H2OEngineService", "NotebookEngineService", "EngineService"]);

/** Which part owns a public service: sandbox.v1 is the sandbox's, engines the engine's, the rest the catalogue's. */
export function partOf(service: DescService): PartName {
  if (service.file.proto.package === "enginemanager.sandbox.v1") return "sandbox";
  return enginesV1.has(service.name) ? "engine" : "catalogue";
}

/** Every public service of the contract (the internal agent API and reflection are not). */
export function publicServices(registry: FileRegistry): DescService[] {
  const out: DescService[] = [];
  for (const file of registry.files) {
    if (publicPackages.has(file.proto.package)) out.push(...file.services);
  }
  return out;
}

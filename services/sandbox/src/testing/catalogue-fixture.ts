// Catalogue images and templates for the tests, made as root through the REST API.
import { waitFor } from "@aiem/kit/testing";
import type { CatalogueModule } from "@aiem/catalogue";
import type { SandboxModule } from "../module.js";
import { ok } from "./rest-assertions.js";
import type { RestCall } from "./rest-client.js";

export type CatalogueFixture = (
  id: string,
  template?: Record<string, unknown>,
  image?: Record<string, unknown>,
) => Promise<{ image: string; template: string }>;

/** Creates a catalogue image and template (as root) and waits until the sandbox service has them. */
export function createCatalogueFixture(
  rest: RestCall,
  catalogue: CatalogueModule,
  sandbox: SandboxModule,
): CatalogueFixture {
  return async (id, template = {}, image = {}) => {
    const img = ok(
      await rest("POST", `/v1/workspaces/global/sandboxEngineImages?sandboxEngineImageId=${id}`, {
        who: "admin",
        body: { image: "python:3.12-slim", displayName: `Image ${id}`, enabled: true, ...image },
      }),
    ).sandboxEngineImage.name as string;
    const tpl = ok(
      await rest("POST", `/v1/workspaces/global/sandboxEngineTemplates?sandboxEngineTemplateId=${id}`, {
        who: "admin",
        body: {
          displayName: `Template ${id}`,
          memoryBytesLimit: String(512 << 20),
          milliCpuLimit: 1000,
          maxIdleDuration: "3600s",
          enabled: true,
          environmentalVariables: { FROM_TEMPLATE: "template", SHARED: "template" },
          ...template,
        },
      }),
    ).sandboxEngineTemplate.name as string;
    await catalogue.flushEvents();
    const want = (
      name: string,
      kind: "sandboxEngineImages" | "sandboxEngineTemplates",
      body: Record<string, unknown>,
    ) => {
      const r = sandbox.catalogue?.get(kind, name) as { enabled?: boolean } | undefined;
      return r !== undefined && r.enabled === (body.enabled ?? true);
    };
    await waitFor(() => want(img, "sandboxEngineImages", image) && want(tpl, "sandboxEngineTemplates", template), {
      timeoutMs: 10_000,
      intervalMs: 10,
      what: "the sandbox service to see the catalogue fixture",
    });
    return { image: img, template: tpl };
  };
}

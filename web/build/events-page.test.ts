// The events page lists every message of proto/enginemanager/events/v1, nested ones included,
// each with its anchor and field table, below the page's account of streams and delivery.
import type { DescMessage } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { apiPackages, buildApiReference, eventPackages } from "./api-reference.js";
import { loadDescriptorRegistry } from "./proto-descriptors.js";
import { buildSiteModel } from "./site-model.js";
import { EVENTS_ROUTE } from "./site-pages.js";
import { fileURLToPath } from "node:url";

const registry = loadDescriptorRegistry();
const eventFiles = [...registry.files].filter((f) => f.proto.package === "enginemanager.events.v1");
const all = (messages: readonly DescMessage[]): DescMessage[] =>
  messages.flatMap((m) => [m, ...all(m.nestedMessages.filter((n) => !n.proto.options?.mapEntry))]);
const eventMessages = all(eventFiles.flatMap((f) => f.messages));

describe("the events page", () => {
  const events = buildApiReference(registry, {
    introHtml: "<p>intro</p>",
    introToc: [],
    route: EVENTS_ROUTE,
    packages: eventPackages,
    title: "Events",
  });

  it("renders every event message with its anchor and fields", () => {
    expect(eventMessages.map((m) => m.name)).toEqual(
      expect.arrayContaining(["Event", "EngineStateChanged", "SandboxEngineStateChanged", "ProcessStateChanged"]),
    );
    for (const message of eventMessages) {
      expect(events.ids.has(message.typeName), message.typeName).toBe(true);
      expect(events.html, message.typeName).toContain(`id="${message.typeName}"`);
      for (const field of message.fields) expect(events.html).toContain(`id="${message.typeName}.${field.name}"`);
    }
    for (const e of eventFiles.flatMap((f) => f.enums)) expect(events.html).toContain(`id="${e.typeName}"`);
  });

  it("is the events' one home: the API reference documents the services only", () => {
    expect(apiPackages.map((p) => p.name)).not.toContain("enginemanager.events.v1");
    expect(events.html).not.toContain('class="api-service"');
  });

  it("is a page of the site, in the sidebar, with the streams, delivery and the example consumer", () => {
    const model = buildSiteModel({
      webRoot: fileURLToPath(new URL("..", import.meta.url)),
      repoRoot: fileURLToPath(new URL("../..", import.meta.url)),
      base: "/ai-engine-manager/",
    });
    const page = model.pages.find((p) => p.route === EVENTS_ROUTE)!;
    expect(page.title).toBe("Events");
    for (const text of [
      "ENGINEMANAGER_EVENTS",
      "ENGINEMANAGER_CATALOGUE",
      "Nats-Msg-Id",
      "traceparent",
      "At least once",
    ])
      expect(page.html).toContain(text);
    expect(page.html).toContain("followEvents");
    expect(JSON.stringify(model.sidebar)).toContain(`"path":"${EVENTS_ROUTE}"`);
    expect(model.searchDocs.some((d) => d.url === `${EVENTS_ROUTE}#enginemanager.events.v1.EngineStateChanged`)).toBe(
      true,
    );
  });
});

// Renders the API reference page (api/) from the proto descriptors: every service and method
// with its HTTP bindings, request and response messages with field tables, resources, enums and
// the well-known types they use. Everything is computed here at build time; the browser gets
// HTML plus, for the "Try it" panel, each method's sample request.
import type { DescEnum, DescMessage, DescService, FileRegistry } from "@bufbuild/protobuf";
import type { SearchDoc, TocItem } from "../src/site-types.js";
import { symbolTable } from "./api-comment-html.js";
import { createApiPage, type ApiPage } from "./api-page.js";
import { serviceHtml } from "./api-service-html.js";
import { wellKnown, wellKnownHtml } from "./api-well-known.js";
import { escapeHtml, headingHtml } from "./html.js";

export interface ApiPackage {
  name: string;
  title: string;
  summary: string;
}

/** The packages the API reference documents, in page order. The agent API is internal and left out. */
export const apiPackages: ApiPackage[] = [
  {
    name: "enginemanager.v1",
    title: "Engines and catalogue",
    summary:
      "Driverless AI, H2O and notebook engines, the mixed engine list, and the profiles, versions, images, templates and secrets behind them.",
  },
  {
    name: "enginemanager.sandbox.v1",
    title: "Sandbox engines",
    summary: "Sandbox engines and what runs inside them: filesystem, processes, ports, drive and secure store.",
  },
];

/** What the events page documents: the payloads published on NATS JetStream. */
export const eventPackages: ApiPackage[] = [
  {
    name: "enginemanager.events.v1",
    title: "Events",
    summary: "The payloads the engine manager publishes on NATS JetStream, for consumers outside the product.",
  },
];

// Engines first, then the catalogue they use, then secrets; unknown services go last.
const serviceOrder = [
  "DAIEngineService",
  "H2OEngineService",
  "NotebookEngineService",
  "EngineService",
  "DAIEngineProfileService",
  "H2OEngineProfileService",
  "NotebookEngineProfileService",
  "DAIEngineVersionService",
  "H2OEngineVersionService",
  "NotebookEngineImageService",
  "SandboxEngineImageService",
  "SandboxEngineTemplateService",
  "SecretService",
  "SecretVersionService",
  "SandboxEngineService",
  "FilesystemService",
  "ProcessService",
  "PortService",
  "DriveService",
  "SecureStoreService",
  "MetricsService",
];

export interface ApiReference {
  title: string;
  html: string;
  toc: TocItem[];
  searchDocs: SearchDoc[];
  /** Module specifiers of the generated service descriptors, for the "Try it" panel. */
  serviceModules: string[];
  ids: Set<string>;
}

export interface ApiReferenceOptions {
  introHtml: string;
  introToc: TocItem[];
  route: string;
  /** The packages to document (default apiPackages): the events page passes eventPackages. */
  packages?: readonly ApiPackage[];
  /** The page's heading and search label (default "API reference"). */
  title?: string;
}

export function buildApiReference(registry: FileRegistry, options: ApiReferenceOptions): ApiReference {
  const packages = options.packages ?? apiPackages;
  const documented = new Set(packages.map((p) => p.name));
  const files = [...registry.files].filter((f) => documented.has(f.proto.package));
  const services = files.flatMap((f) => f.services);
  services.sort((a, b) => rank(a) - rank(b) || a.typeName.localeCompare(b.typeName));
  const messages = files.flatMap((f) => f.messages);
  const enums = files.flatMap((f) => f.enums);
  // Request and response messages are shown with their method; everything else in the package's
  // types section.
  const methodMessages = new Set(
    services.flatMap((s) => s.methods.flatMap((m) => [m.input.typeName, m.output.typeName])),
  );
  const usedWellKnown = new Set<string>();
  const page = createApiPage(registry, options, symbolTable(services, messages, enums), (typeName) => {
    if (wellKnown[typeName]) usedWellKnown.add(typeName);
  });
  const servicesHtml = services.map((s) => serviceHtml(page, s)).join("");
  const typesHtml = packages.map((p) => packageTypesHtml(page, p, { messages, enums, methodMessages })).join("");
  // Only the well-known types the documented fields use, after every table is rendered.
  const wkHtml = wellKnownHtml(page, usedWellKnown);
  const html = `<h1>${escapeHtml(page.pageTitle)}</h1>${options.introHtml}${packagesHtml(packages)}${servicesHtml}${typesHtml}${wkHtml}`;
  const serviceModules = files.filter((f) => f.services.length > 0).map((f) => `@aiem/proto/${f.name}_pb.js`);
  const { pageTitle: title, toc, searchDocs, ids } = page;
  return { title, html, toc, searchDocs, serviceModules, ids };
}

function packageTypesHtml(
  page: ApiPage,
  pkg: ApiPackage,
  types: { messages: DescMessage[]; enums: DescEnum[]; methodMessages: ReadonlySet<string> },
): string {
  const own = types.messages.filter((m) => m.file.proto.package === pkg.name && !types.methodMessages.has(m.typeName));
  const ownEnums = types.enums.filter((e) => e.file.proto.package === pkg.name);
  if (own.length === 0 && ownEnums.length === 0) return "";
  const id = `${pkg.name}.types`;
  page.ids.add(id);
  const heading = pkg.name === "enginemanager.events.v1" ? `Events (${pkg.name})` : `Resources and types (${pkg.name})`;
  page.toc.push({ id, text: heading, level: 2 });
  for (const m of own) page.toc.push({ id: m.typeName, text: m.name, level: 3 });
  for (const e of ownEnums) page.toc.push({ id: e.typeName, text: e.name, level: 3 });
  return (
    `<section class="api-types">${headingHtml(2, id, escapeHtml(heading))}<p>${escapeHtml(pkg.summary)}</p>` +
    own.map((m) => page.types.messageHtml(m, 3, `${page.pageTitle} · ${pkg.name}`)).join("") +
    ownEnums.map((e) => page.types.enumHtml(e, 3)).join("") +
    `</section>`
  );
}

function packagesHtml(packages: readonly ApiPackage[]): string {
  return (
    `<div class="api-packages">` +
    packages
      .map(
        (p) =>
          `<p><strong>${escapeHtml(p.title)}</strong> — <code>${escapeHtml(p.name)}</code>: ${escapeHtml(p.summary)}</p>`,
      )
      .join("") +
    `</div>`
  );
}

function rank(service: DescService): number {
  const i = serviceOrder.indexOf(service.name);
  return i < 0 ? serviceOrder.length : i;
}

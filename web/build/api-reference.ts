// Renders the API reference page (api/) from the proto descriptors: every service and method
// with its HTTP bindings, request and response messages with field tables, resources, enums and
// the well-known types they use. Everything is computed here at build time; the browser gets
// HTML plus, for the "Try it" panel, each method's sample request.
import { Marked } from "marked";
import type { DescEnum, DescMessage, DescMethod, DescService, FileRegistry } from "@bufbuild/protobuf";
import type { SearchDoc, TocItem } from "../src/site-types.js";
import { SEARCH_TAG } from "../src/site-types.js";
import { escapeHtml, headingHtml } from "./html.js";
import { codeBlockHtml } from "./markdown.js";
import { bindingsOf, commentOf, type HttpBinding } from "./proto-descriptors.js";
import { createSampler } from "./api-samples.js";
import { createTypeRenderer } from "./api-type-html.js";

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

const wellKnown: Record<string, { json: string; text: string }> = {
  "google.protobuf.Timestamp": {
    json: '"2026-03-01T12:30:00Z"',
    text: "A point in time, in JSON an RFC 3339 string in UTC with an optional fraction of a second.",
  },
  "google.protobuf.Duration": {
    json: '"3600s"',
    text: 'A length of time, in JSON a number of seconds followed by s, with up to nine decimals (`"1.5s"`).',
  },
  "google.protobuf.FieldMask": {
    json: '"displayName,cpu"',
    text: "A list of field paths. Over REST, `updateMask` is a query parameter with comma-separated snake_case paths (`updateMask=display_name,cpu`); in a JSON body it is one comma-separated string of camelCase paths.",
  },
  "google.protobuf.Any": {
    json: '{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "..."}',
    text: "A message of any type, in JSON an object whose `@type` names the type and whose other members are that message's fields.",
  },
  "google.api.HttpBody": {
    json: '{"contentType": "text/plain; charset=utf-8", "data": "c3RhbmQtaW4gbGlzdGVuaW5nCg==", "extensions": []}',
    text: "Bytes with their content type, in JSON `contentType` and `data` (base64, standard alphabet with padding); `extensions` is unused.",
  },
  "google.type.Date": {
    json: '{"year": 2027, "month": 1, "day": 31}',
    text: "A calendar day without a time zone, in JSON its year, month (1-12) and day (1-31).",
  },
  "google.rpc.Status": {
    json: '{"code": 5, "message": "daiEngine workspaces/default/daiEngines/demo not found", "details": []}',
    text: "The error body of every failed call: `code` is the gRPC status code (3 INVALID_ARGUMENT, 5 NOT_FOUND, 6 ALREADY_EXISTS, 7 PERMISSION_DENIED, 9 FAILED_PRECONDITION, 16 UNAUTHENTICATED, ...), `message` says what was wrong and with which field, and `details` may carry structured information.",
  },
};

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
  const pageTitle = options.title ?? "API reference";
  const documented = new Set(packages.map((p) => p.name));
  const files = [...registry.files].filter((f) => documented.has(f.proto.package));
  const services = files.flatMap((f) => f.services);
  services.sort((a, b) => rank(a) - rank(b) || a.typeName.localeCompare(b.typeName));
  const messages = files.flatMap((f) => f.messages);
  const enums = files.flatMap((f) => f.enums);

  // Request and response messages are shown with their method; everything else in the package's
  // types section.
  const methodMessages = new Map<string, DescMethod>();
  for (const s of services)
    for (const m of s.methods) {
      methodMessages.set(m.input.typeName, m);
      methodMessages.set(m.output.typeName, m);
    }

  const ids = new Set<string>();
  const toc: TocItem[] = [...options.introToc];
  const searchDocs: SearchDoc[] = [];
  const usedWellKnown = new Set<string>();
  const symbols = symbolTable(services, messages, enums);
  const comment = (text: string) => commentHtml(text, symbols);
  const sample = createSampler(registry);

  const addDoc = (id: string, title: string, page: string, text: string) => {
    searchDocs.push({
      id: `${options.route.replace(/\/$/, "")}:${id}`,
      title,
      page,
      url: `${options.route}#${id}`,
      text,
      kind: "api",
      tags: [SEARCH_TAG],
    });
  };

  const { fieldTable, enumHtml, messageHtml } = createTypeRenderer({
    ids,
    symbols,
    pageTitle,
    comment,
    addDoc,
    noteType: (typeName) => {
      if (wellKnown[typeName]) usedWellKnown.add(typeName);
    },
  });

  const bindingHtml = (b: HttpBinding): string => {
    const body =
      b.body === "*"
        ? "body: the request fields not in the path"
        : b.body
          ? `body: <code>${escapeHtml(b.body)}</code>`
          : "no body; other request fields go in the query string";
    return (
      `<div class="http-binding"><span class="http-verb http-${b.verb.toLowerCase()}">${escapeHtml(b.verb)}</span> ` +
      `<code class="http-path">${escapeHtml(b.path)}</code> <span class="http-body">${body}</span></div>`
    );
  };

  const methodHtml = (method: DescMethod): string => {
    const id = `${method.parent.typeName}.${method.name}`;
    ids.add(id);
    const bindings = bindingsOf(method);
    // A method without an HTTP binding is served over Connect and gRPC only (a client stream cannot be a REST call).
    const rest =
      bindings.length > 0
        ? " Over REST the response is newline-delimited JSON, one object per message."
        : " Connect and gRPC only.";
    const streaming =
      method.methodKind === "server_streaming"
        ? `<p class="api-streaming"><span class="badge badge-streaming">Server streaming</span>${rest}</p>`
        : method.methodKind === "client_streaming"
          ? `<p class="api-streaming"><span class="badge badge-streaming">Client streaming</span> Connect and gRPC only.</p>`
          : "";
    const example = sample(method);
    const curl = example.curl
      ? `<details class="api-example"><summary>REST example</summary>${codeBlockHtml(example.curl, "bash")}</details>`
      : "";
    const tryIt =
      method.methodKind === "unary" || method.methodKind === "server_streaming"
        ? `<div class="try-it-slot"><button type="button" class="button button-secondary try-it-button" data-try="${escapeHtml(id)}" ` +
          `data-sample="${escapeHtml(JSON.stringify(example.connectJson, null, 2))}" aria-expanded="false">Try it</button></div>`
        : "";
    addDoc(
      id,
      method.name,
      `${pageTitle} · ${method.parent.name}`,
      `${method.name} ${bindings.map((b) => `${b.verb} ${b.path}`).join(" ")} ${commentOf(method)}`,
    );
    const io = (label: string, message: DescMessage) => {
      ids.add(message.typeName);
      return (
        `<div class="api-io">${headingHtml(4, message.typeName, `${label}: ${escapeHtml(message.name)}`)}` +
        `${fieldTable(message)}</div>`
      );
    };
    return (
      `<section class="api-method">${headingHtml(3, id, `<span class="api-kind">rpc</span> ${escapeHtml(method.name)}`)}` +
      `${bindings.map(bindingHtml).join("")}${streaming}${comment(commentOf(method))}${curl}${tryIt}` +
      `${io("Request", method.input)}${io("Response", method.output)}</section>`
    );
  };

  const serviceHtml = (service: DescService): string => {
    ids.add(service.typeName);
    toc.push({ id: service.typeName, text: service.name, level: 2 });
    for (const m of service.methods) toc.push({ id: `${service.typeName}.${m.name}`, text: m.name, level: 3 });
    addDoc(service.typeName, service.name, pageTitle, `${service.typeName} ${commentOf(service)}`);
    return (
      `<section class="api-service">${headingHtml(2, service.typeName, `<span class="api-kind">service</span> ${escapeHtml(service.name)}`)}` +
      `<p class="api-fullname"><code>${escapeHtml(service.typeName)}</code></p>${comment(commentOf(service))}` +
      `${service.methods.map(methodHtml).join("")}</section>`
    );
  };

  const packageTypesHtml = (pkg: ApiPackage): string => {
    const own = messages.filter((m) => m.file.proto.package === pkg.name && !methodMessages.has(m.typeName));
    const ownEnums = enums.filter((e) => e.file.proto.package === pkg.name);
    if (own.length === 0 && ownEnums.length === 0) return "";
    const id = `${pkg.name}.types`;
    ids.add(id);
    const heading =
      pkg.name === "enginemanager.events.v1" ? `Events (${pkg.name})` : `Resources and types (${pkg.name})`;
    toc.push({ id, text: heading, level: 2 });
    for (const m of own) toc.push({ id: m.typeName, text: m.name, level: 3 });
    for (const e of ownEnums) toc.push({ id: e.typeName, text: e.name, level: 3 });
    return (
      `<section class="api-types">${headingHtml(2, id, escapeHtml(heading))}<p>${escapeHtml(pkg.summary)}</p>` +
      own.map((m) => messageHtml(m, 3, `${pageTitle} · ${pkg.name}`)).join("") +
      ownEnums.map((e) => enumHtml(e, 3)).join("") +
      `</section>`
    );
  };

  const servicesHtml = services.map(serviceHtml).join("");
  const typesHtml = packages.map(packageTypesHtml).join("");

  // Only the well-known types the documented fields use, after every table is rendered.
  const wkId = "well-known-types";
  ids.add(wkId);
  toc.push({ id: wkId, text: "Well-known types", level: 2 });
  const wkHtml = [...usedWellKnown, "google.rpc.Status"]
    .filter((name, i, all) => all.indexOf(name) === i)
    .sort()
    .map((name) => {
      ids.add(name);
      const short = name.split(".").pop()!;
      toc.push({ id: name, text: short, level: 3 });
      const info = wellKnown[name]!;
      addDoc(name, short, `${pageTitle} · Well-known types`, `${name} ${info.text}`);
      return (
        `<section class="api-message">${headingHtml(3, name, `<span class="api-kind">message</span> ${escapeHtml(short)}`)}` +
        `<p class="api-fullname"><code>${escapeHtml(name)}</code></p>${comment(info.text)}` +
        `${codeBlockHtml(info.json, "json", "JSON")}</section>`
      );
    })
    .join("");

  const packagesHtml =
    `<div class="api-packages">` +
    packages
      .map(
        (p) =>
          `<p><strong>${escapeHtml(p.title)}</strong> — <code>${escapeHtml(p.name)}</code>: ${escapeHtml(p.summary)}</p>`,
      )
      .join("") +
    `</div>`;

  const html =
    `<h1>${escapeHtml(pageTitle)}</h1>${options.introHtml}${packagesHtml}${servicesHtml}${typesHtml}` +
    `<section class="api-types">${headingHtml(2, wkId, "Well-known types")}` +
    `<p>Types from <code>google.protobuf</code>, <code>google.api</code>, <code>google.type</code> and <code>google.rpc</code> that the API uses, and how they look in JSON.</p>${wkHtml}</section>`;

  const serviceModules = files.filter((f) => f.services.length > 0).map((f) => `@aiem/proto/${f.name}_pb.js`);

  return { title: pageTitle, html, toc, searchDocs, serviceModules, ids };
}

function rank(service: DescService): number {
  const i = serviceOrder.indexOf(service.name);
  return i < 0 ? serviceOrder.length : i;
}

export type SymbolTable = Map<string, string>;

// Names in backticks that identify exactly one documented item become links to it.
function symbolTable(services: DescService[], messages: DescMessage[], enums: DescEnum[]): SymbolTable {
  const counts = new Map<string, string[]>();
  const add = (short: string, id: string) => counts.set(short, [...(counts.get(short) ?? []), id]);
  for (const s of services) {
    add(s.name, s.typeName);
    for (const m of s.methods) add(m.name, `${s.typeName}.${m.name}`);
  }
  const walk = (m: DescMessage) => {
    add(m.name, m.typeName);
    m.nestedMessages.forEach(walk);
    for (const e of m.nestedEnums) add(`${m.name}.${e.name}`, e.typeName);
  };
  messages.forEach(walk);
  for (const e of enums) add(e.name, e.typeName);
  const table: SymbolTable = new Map();
  for (const [short, targets] of counts) if (targets.length === 1) table.set(short, targets[0]!);
  return table;
}

const commentMarked = new Marked({ gfm: true });

/** Comments are a small Markdown subset: paragraphs, lists and `code`, which links when it names an item. */
export function commentHtml(text: string, symbols: SymbolTable = new Map()): string {
  if (!text) return "";
  // Angle brackets outside code spans are prose (`<workspace>` placeholders), never markup.
  const safe = text
    .split("`")
    .map((part, i) => (i % 2 === 0 ? part.replace(/</g, "&lt;").replace(/>/g, "&gt;") : part))
    .join("`");
  const html = commentMarked.parse(safe, { async: false });
  return html.replace(/<code>([^<]+)<\/code>/g, (whole, name: string) => {
    const target = symbols.get(name);
    return target ? `<a href="#${escapeHtml(target)}">${whole}</a>` : whole;
  });
}

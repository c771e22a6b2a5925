// Everything the site is made of, computed once per build from the sources: the Markdown guides,
// the proto descriptors and the Python client's source. The Vite plugin serves it as modules.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { Layout, RouteInfo, SearchDoc, SidebarItem, TocItem } from "../src/site-types.js";
import { SEARCH_TAG } from "../src/site-types.js";
import { buildApiReference, eventPackages, type ApiReference, type ApiReferenceOptions } from "./api-reference.js";
import { createMarkdownRenderer } from "./markdown.js";
import { loadDescriptorRegistry } from "./proto-descriptors.js";
import { buildPythonReference, findPythonPackage, readPythonPackage } from "./py-reference.js";
import { sectionDocs } from "./search-index.js";
import {
  API_INTRO_FILE,
  API_ROUTE,
  createSidebar,
  EVENTS_INTRO_FILE,
  EVENTS_ROUTE,
  guidePages,
  PY_REFERENCE_ROUTE,
  SEARCH_ROUTE,
} from "./site-pages.js";

export interface SitePage {
  route: string;
  title: string;
  description: string;
  layout: Layout;
  html: string;
  toc: TocItem[];
}

export interface SiteModel {
  pages: SitePage[];
  routes: RouteInfo[];
  sidebar: SidebarItem[];
  searchDocs: SearchDoc[];
  apiServiceModules: string[];
  /** Files shipped as they are at the site's root, for download: the OpenAPI document. */
  downloads: SiteDownload[];
  /** Source files the model was built from, for the dev server to watch. */
  inputs: string[];
}

export interface SiteDownload {
  /** Relative to the site's base path, as internal links name it: "openapi.json". */
  fileName: string;
  source: string;
}

export interface SiteModelOptions {
  webRoot: string;
  repoRoot: string;
  base: string;
  /** The Python package to document; found under clients/python when not given. */
  pythonPackage?: string | null;
}

/** How the model reads and renders the guides, and the internal links their pages hold. */
interface SiteSources {
  read(file: string): string;
  readonly render: ReturnType<typeof createMarkdownRenderer>;
  readonly links: { from: string; to: string }[];
}

export function buildSiteModel(options: SiteModelOptions): SiteModel {
  const { webRoot, repoRoot, base } = options;
  const contentDir = join(webRoot, "content");
  const inputs: string[] = [];
  const read = (file: string) => {
    const path = join(contentDir, file);
    inputs.push(path);
    return readFileSync(path, "utf8");
  };
  const sources: SiteSources = { read, render: createMarkdownRenderer({ base, readInclude: read }), links: [] };
  const pages: SitePage[] = guidePages.map((g) => guidePage(sources, g));
  const api = referencePage(sources, API_INTRO_FILE, { route: API_ROUTE });
  pages.push(api.page);
  const events = referencePage(sources, EVENTS_INTRO_FILE, {
    route: EVENTS_ROUTE,
    packages: eventPackages,
    title: "Events",
  });
  pages.push(events.page);
  const pyDir = options.pythonPackage === null ? undefined : (options.pythonPackage ?? findPythonPackage(repoRoot));
  const py = buildPythonReference(pyDir ? readPythonPackage(pyDir) : undefined, {
    prefix: PY_REFERENCE_ROUTE,
    base,
    sourceLabel: pyDir ? relative(repoRoot, pyDir) || pyDir : "clients/python/ai_engine_manager",
  });
  for (const p of py.pages) pages.push({ ...p, layout: "doc" });

  const routes: RouteInfo[] = [
    ...pages.map((p) => ({ path: p.route, title: p.title, layout: p.layout })),
    { path: SEARCH_ROUTE, title: "Search", layout: "search" as const },
  ];
  const duplicate = routes.find((r, i) => routes.findIndex((o) => o.path === r.path) !== i);
  if (duplicate) throw new Error(`two pages claim the route "${duplicate.path}"`);
  const downloads = openApiDownloads(repoRoot);
  inputs.push(...downloads.map((d) => join(repoRoot, OPENAPI_DIR, d.fileName)));
  checkLinks(
    sources.links,
    pages,
    routes,
    downloads.map((d) => d.fileName),
  );

  const searchDocs: SearchDoc[] = [
    ...pages
      .filter((p) => p.layout !== "api" && !p.route.startsWith(PY_REFERENCE_ROUTE))
      .flatMap((p) => sectionDocs(p.route, p.title, p.html)),
    ...sectionDocs(API_ROUTE, "API reference", api.introHtml),
    ...api.reference.searchDocs,
    ...sectionDocs(EVENTS_ROUTE, "Events", events.introHtml),
    ...events.reference.searchDocs,
    ...py.searchDocs,
  ].filter((d) => d.tags.includes(SEARCH_TAG));

  return {
    pages,
    routes,
    sidebar: createSidebar(py.sidebar),
    searchDocs,
    apiServiceModules: api.reference.serviceModules,
    downloads,
    inputs,
  };
}

/** A guide's page, its links recorded under the file they are in (anchors under its route). */
function guidePage(sources: SiteSources, g: (typeof guidePages)[number]): SitePage {
  const page = sources.render(sources.read(g.file), g.file);
  sources.links.push(
    ...page.links.map((to) => ({ from: g.file, to: to.startsWith(g.file) ? g.route + to.slice(g.file.length) : to })),
  );
  return {
    route: g.route,
    title: page.title,
    description: page.description,
    layout: g.layout,
    html: page.html,
    toc: page.toc,
  };
}

/** A page built from the proto descriptors (the API reference, the events), after its Markdown intro. */
function referencePage(
  sources: SiteSources,
  introFile: string,
  reference: Omit<ApiReferenceOptions, "introHtml" | "introToc">,
): { page: SitePage; introHtml: string; reference: ApiReference } {
  const intro = sources.render(sources.read(introFile), introFile);
  sources.links.push(
    ...intro.links.map((to) => ({
      from: introFile,
      to: to.startsWith(introFile) ? reference.route + to.slice(introFile.length) : to,
    })),
  );
  const built = buildApiReference(loadDescriptorRegistry(), {
    introHtml: intro.html.replace(/^<h1>[\s\S]*?<\/h1>\n?/, ""),
    introToc: intro.toc,
    ...reference,
  });
  const page: SitePage = {
    route: reference.route,
    title: built.title,
    description: intro.description,
    layout: "api",
    html: built.html,
    toc: built.toc,
  };
  return { page, introHtml: intro.html, reference: built };
}

// What `npm run gen` wrote from the protos (scripts/openapi/generate.ts).
const OPENAPI_DIR = "proto/gen/openapi";

function openApiDownloads(repoRoot: string): SiteDownload[] {
  return ["openapi.json", "openapi.yaml"].map((fileName) => ({
    fileName,
    source: readFileSync(join(repoRoot, OPENAPI_DIR, fileName), "utf8"),
  }));
}

// A broken internal link fails the build, so a renamed page or heading cannot go unnoticed.
export function checkLinks(
  links: { from: string; to: string }[],
  pages: SitePage[],
  routes: RouteInfo[],
  files: readonly string[] = [],
): void {
  const known = new Set([...routes.map((r) => r.path), ...files]);
  const ids = new Map(pages.map((p) => [p.route, new Set([...p.html.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]!))]));
  const broken: string[] = [];
  for (const { from, to } of links) {
    const [path = "", hash] = to.split("#");
    if (!known.has(path)) broken.push(`${from}: /${to} is not a page`);
    else if (hash && !ids.get(path)?.has(hash)) broken.push(`${from}: /${to} has no anchor #${hash}`);
  }
  if (broken.length) throw new Error(`broken links:\n${broken.join("\n")}`);
}

// The Vite plugin that turns the site model into modules: one chunk per page, the route table,
// the "Try it" service descriptors, the search index (a hashed asset) and routes.json, which the
// static handler reads to tell known routes from unknown ones. It also pre-compresses the output.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { Plugin, ResolvedConfig, Rolldown, ViteDevServer } from "vite";
import { createBootScript } from "../src/boot-script.js";
import { buildSearchIndex } from "./search-index.js";
import { buildSiteModel, type SiteModel, type SiteModelOptions } from "./site-model.js";

const ROUTES_ID = "virtual:aiem/routes";
const SERVICES_ID = "virtual:aiem/api-services";
const PAGE_PREFIX = "virtual:aiem/page/";
const resolved = (id: string) => `\0${id}`;

/** Chunk names for page modules: "page-py-login", "page-home". */
export function pageChunkName(route: string): string {
  return `page-${route.replace(/\/$/, "").replace(/[^a-zA-Z0-9]+/g, "-") || "home"}`;
}

export interface RoutesManifest {
  version: string;
  routes: { path: string; title: string; chunk?: string }[];
}

export function createSitePlugin(options: Omit<SiteModelOptions, "base"> & { version: string }): Plugin {
  let config: ResolvedConfig;
  let model: SiteModel | undefined;
  let indexJson = "";
  let indexFile = "";

  const load = () => {
    model = buildSiteModel({ ...options, base: config.base });
    indexJson = buildSearchIndex(model.searchDocs);
    const hash = createHash("sha256").update(indexJson).digest("base64url").slice(0, 10);
    indexFile = `${config.build.assetsDir}/search-index-${hash}.json`;
    return model;
  };
  const current = () => model ?? load();

  return {
    name: "aiem-site",
    configResolved(resolvedConfig) {
      config = resolvedConfig;
    },
    buildStart() {
      for (const file of load().inputs) this.addWatchFile(file);
    },
    resolveId(id) {
      if (id === ROUTES_ID || id === SERVICES_ID || id.startsWith(PAGE_PREFIX)) return resolved(id);
      return undefined;
    },
    load(id) {
      if (!id.startsWith("\0virtual:aiem/")) return undefined;
      return virtualModuleSource(current(), id.slice(1), config.base + indexFile);
    },
    transformIndexHtml() {
      return [{ tag: "script", children: createBootScript(), injectTo: "head-prepend" }];
    },
    configureServer(server) {
      serveFromMemory(server, {
        base: () => config.base,
        model: () => model,
        indexFile: () => indexFile,
        indexJson: () => indexJson,
        drop: () => {
          model = undefined;
        },
      });
    },
    generateBundle(_, bundle) {
      const site = current();
      this.emitFile({ type: "asset", fileName: indexFile, source: indexJson });
      for (const download of site.downloads)
        this.emitFile({ type: "asset", fileName: download.fileName, source: download.source });
      const manifest = routesManifest(site, options.version, bundle);
      this.emitFile({ type: "asset", fileName: "routes.json", source: JSON.stringify(manifest, null, 2) });
    },
    closeBundle() {
      if (config.command !== "build") return;
      compressDirectory(resolve(config.root, config.build.outDir));
    },
  };
}

/** The source of one of the plugin's virtual modules (`name` without its \0), if it is one. */
function virtualModuleSource(site: SiteModel, name: string, searchIndexUrl: string): string | undefined {
  if (name === ROUTES_ID) {
    const loaders = site.pages
      .map((p) => `  ${JSON.stringify(p.route)}: () => import(${JSON.stringify(PAGE_PREFIX + p.route)}),`)
      .join("\n");
    return [
      `export const routes = ${JSON.stringify(site.routes)};`,
      `export const sidebar = ${JSON.stringify(site.sidebar)};`,
      `export const searchIndexUrl = ${JSON.stringify(searchIndexUrl)};`,
      `export const loaders = {\n${loaders}\n};`,
    ].join("\n");
  }
  if (name === SERVICES_ID) {
    const imports = site.apiServiceModules.map((m, i) => `import * as m${i} from ${JSON.stringify(m)};`);
    const list = site.apiServiceModules.map((_, i) => `m${i}`).join(", ");
    return `${imports.join("\n")}\nexport const services = [${list}].flatMap((m) => Object.values(m)).filter((d) => d && d.kind === "service");\n`;
  }
  if (name.startsWith(PAGE_PREFIX)) {
    const route = name.slice(PAGE_PREFIX.length);
    const page = site.pages.find((p) => p.route === route);
    if (!page) return undefined;
    const { title, description, html, toc } = page;
    return `export const page = ${JSON.stringify({ title, description, html, toc })};`;
  }
  return undefined;
}

/** What the dev server reads of the plugin's state, and how it drops a stale model. */
interface DevState {
  base(): string;
  model(): SiteModel | undefined;
  indexFile(): string;
  indexJson(): string;
  drop(): void;
}

/**
 * The dev server serves the search index and the downloads from memory at the URLs the build would
 * give them, and reloads the pages when a source of the model changes.
 */
function serveFromMemory(server: ViteDevServer, state: DevState): void {
  server.middlewares.use((req, res, next) => {
    const model = state.model();
    if (model && req.url === state.base() + state.indexFile()) {
      res.setHeader("Content-Type", "application/json");
      res.end(state.indexJson());
      return;
    }
    const download = model?.downloads.find((d) => req.url === state.base() + d.fileName);
    if (download) {
      res.setHeader("Content-Type", download.fileName.endsWith(".yaml") ? "application/yaml" : "application/json");
      res.end(download.source);
      return;
    }
    next();
  });
  server.watcher.on("change", (file) => {
    if (state.model()?.inputs.includes(file)) {
      state.drop();
      server.ws.send({ type: "full-reload" });
      for (const mod of server.moduleGraph.idToModuleMap.values()) {
        if (mod.id?.startsWith("\0virtual:aiem/")) server.moduleGraph.invalidateModule(mod);
      }
    }
  });
}

/** routes.json: every route, with the chunk of its page where it has one. */
function routesManifest(site: SiteModel, version: string, bundle: Rolldown.OutputBundle): RoutesManifest {
  const chunks = new Map<string, string>();
  for (const item of Object.values(bundle)) {
    if (item.type === "chunk" && item.facadeModuleId?.startsWith(`\0${PAGE_PREFIX}`)) {
      chunks.set(item.facadeModuleId.slice(PAGE_PREFIX.length + 1), item.fileName);
    }
  }
  return {
    version,
    routes: site.routes.map((r) => ({
      path: r.path,
      title: r.title,
      ...(chunks.has(r.path) ? { chunk: chunks.get(r.path)! } : {}),
    })),
  };
}

// Pre-compressed copies let the static handler serve gzip and brotli without work per request.
function compressDirectory(dir: string): void {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      compressDirectory(path);
      continue;
    }
    if (!/\.(js|css|html|json|svg|txt|map)$/.test(entry)) continue;
    const data = readFileSync(path);
    if (data.length < 1024) continue;
    writeFileSync(`${path}.gz`, gzipSync(data, { level: 9 }));
    writeFileSync(`${path}.br`, brotliCompressSync(data, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  }
}

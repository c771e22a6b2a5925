// Builds the documentation site: `npx vite build --config web/vite.config.ts` writes web/dist.
import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";
import { createSitePlugin, pageChunkName } from "./build/site-plugin.js";
import { SITE_VERSION } from "./src/site-types.js";

const webRoot = fileURLToPath(new URL(".", import.meta.url));
const repoRoot = fileURLToPath(new URL("..", import.meta.url));

// A hosted DocSearch-compatible service replaces the local index when all three are set.
const docsearch =
  process.env.AIEM_DOCSEARCH_APP_ID && process.env.AIEM_DOCSEARCH_API_KEY && process.env.AIEM_DOCSEARCH_INDEX
    ? {
        appId: process.env.AIEM_DOCSEARCH_APP_ID,
        apiKey: process.env.AIEM_DOCSEARCH_API_KEY,
        indexName: process.env.AIEM_DOCSEARCH_INDEX,
        ...(process.env.AIEM_DOCSEARCH_HOST ? { host: process.env.AIEM_DOCSEARCH_HOST } : {}),
      }
    : null;

// Vite reads the configuration from a default export.
export default defineConfig({
  root: webRoot,
  base: "/ai-engine-manager/",
  publicDir: "public",
  define: { __DOCSEARCH__: JSON.stringify(docsearch) },
  plugins: [react(), createSitePlugin({ webRoot, repoRoot, version: SITE_VERSION })],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1500,
    rolldownOptions: {
      output: {
        chunkFileNames: (chunk) => {
          const id = chunk.facadeModuleId ?? "";
          const page = /^\0virtual:aiem\/page\/(.*)$/.exec(id);
          return page ? `assets/${pageChunkName(page[1]!)}-[hash].js` : "assets/[name]-[hash].js";
        },
      },
    },
  },
});

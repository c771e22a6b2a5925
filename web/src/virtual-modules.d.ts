// Modules the site plugin (build/site-plugin.ts) generates at build time.
declare module "virtual:aiem/routes" {
  import type { PageContent, RouteInfo, SidebarItem } from "./site-types.js";
  export const routes: RouteInfo[];
  export const sidebar: SidebarItem[];
  export const searchIndexUrl: string;
  export const loaders: Record<string, () => Promise<{ page: PageContent }>>;
}

declare module "virtual:aiem/api-services" {
  import type { DescService } from "@bufbuild/protobuf";
  export const services: DescService[];
}

// Set by vite.config.ts from AIEM_DOCSEARCH_* at build time; null means the local index.
declare const __DOCSEARCH__: {
  appId: string;
  apiKey: string;
  indexName: string;
  host?: string;
} | null;

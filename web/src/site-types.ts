// Shapes shared by the build (which produces them) and the browser app (which renders them).

export interface TocItem {
  id: string;
  text: string;
  level: 2 | 3;
}

/** What every page chunk exports as `page`: the page rendered to HTML at build time. */
export interface PageContent {
  title: string;
  description: string;
  html: string;
  toc: TocItem[];
}

/**
 * home: no sidebar or table of contents; doc: sidebar and table of contents; api: the API
 * reference's own navigation in the sidebar column; search: the search page.
 */
export type Layout = "home" | "doc" | "api" | "search";

export interface RouteInfo {
  /** Relative to the base path: "" is the home page, "api/" the API reference. */
  path: string;
  title: string;
  layout: Layout;
}

export type SidebarItem =
  | { type: "link"; label: string; path: string }
  | { type: "category"; label: string; path?: string; items: SidebarItem[] };

/** One searchable unit: a page section, an API item or a Python object. */
export interface SearchDoc {
  id: string;
  /** The heading or item name. */
  title: string;
  /** The page it is on, shown above the title in results. */
  page: string;
  /** Relative to the base path, with a fragment for sections. */
  url: string;
  text: string;
  kind: "page" | "section" | "api" | "python";
  tags: string[];
}

export const SEARCH_TAG = "ai-engine-manager";
export const SITE_VERSION = "1.3.0";

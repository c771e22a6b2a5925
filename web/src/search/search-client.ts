// Search backends. The default is the local index built with the site; a hosted service that
// speaks the DocSearch (Algolia) query API can be configured at build time instead. Either way
// nothing is fetched until search is first opened.
import { SEARCH_TAG } from "../site-types.js";
import type { StoredResult } from "./index-options.js";

export interface SearchHit {
  id: string;
  title: string;
  page: string;
  /** Absolute URL path, with the base path and any fragment. */
  url: string;
  excerpt: string;
  kind: string;
}

export interface SearchClient {
  /** Loads whatever the backend needs; search calls it too, so calling it early only warms up. */
  prepare(): Promise<void>;
  search(query: string, limit?: number): Promise<SearchHit[]>;
}

interface MiniSearchLike {
  search(query: string, options: object): (StoredResult & { score: number })[];
}

export interface LocalSearchOptions {
  indexUrl: string;
  base: string;
  tag?: string;
  fetch?: typeof fetch;
  loadIndex?: (json: string) => Promise<MiniSearchLike>;
}

const defaultLoadIndex = async (json: string): Promise<MiniSearchLike> => {
  const [{ default: MiniSearch }, { indexOptions }] = await Promise.all([
    import("minisearch"),
    import("./index-options.js"),
  ]);
  return MiniSearch.loadJSON<StoredResult>(json, indexOptions) as unknown as MiniSearchLike;
};

export function createLocalSearch(options: LocalSearchOptions): SearchClient {
  const tag = options.tag ?? SEARCH_TAG;
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const loadIndex = options.loadIndex ?? defaultLoadIndex;
  let index: Promise<MiniSearchLike> | undefined;

  const prepare = () => {
    index ??= (async () => {
      const response = await doFetch(options.indexUrl);
      if (!response.ok) throw new Error(`search index: HTTP ${response.status}`);
      return loadIndex(await response.text());
    })();
    // A failed load is not kept: the next search tries again, for example once the network is back.
    index.catch(() => (index = undefined));
    return index;
  };

  return {
    prepare: async () => {
      await prepare();
    },
    async search(query, limit = 20) {
      const mini = await prepare();
      const { searchOptions } = await import("./index-options.js");
      return mini
        .search(query, { ...searchOptions, filter: (r: StoredResult) => r.tags.includes(tag) })
        .slice(0, limit)
        .map((r) => ({
          id: r.id,
          title: r.title,
          page: r.page,
          url: options.base + r.url,
          excerpt: r.excerpt,
          kind: r.kind,
        }));
    },
  };
}

export interface DocSearchOptions {
  appId: string;
  apiKey: string;
  indexName: string;
  /** Defaults to Algolia's host for the application. */
  host?: string;
  tag?: string;
  language?: string;
  fetch?: typeof fetch;
  /** The site's origin: hits on it become site paths, others stay absolute URLs. */
  origin?: string;
}

interface DocSearchHit {
  objectID: string;
  url: string;
  hierarchy: Record<string, string | null>;
  content?: string | null;
  _snippetResult?: { content?: { value: string } };
}

const stripTags = (html: string) => html.replace(/<[^>]+>/g, "");

export function createDocSearch(options: DocSearchOptions): SearchClient {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const host = options.host ?? `https://${options.appId}-dsn.algolia.net`;
  const origin = options.origin ?? globalThis.location?.origin ?? "http://localhost";
  return {
    prepare: async () => {},
    async search(query, limit = 20) {
      const response = await doFetch(`${host}/1/indexes/${encodeURIComponent(options.indexName)}/query`, {
        method: "POST",
        headers: {
          "X-Algolia-Application-Id": options.appId,
          "X-Algolia-API-Key": options.apiKey,
          "Content-Type": "application/json",
        },
        body: JSON.stringify({
          query,
          hitsPerPage: limit,
          facetFilters: [`language:${options.language ?? "en"}`, [`docusaurus_tag:${options.tag ?? SEARCH_TAG}`]],
          attributesToSnippet: ["content:20"],
        }),
      });
      if (!response.ok) throw new Error(`search service: HTTP ${response.status}`);
      const body = (await response.json()) as { hits: DocSearchHit[] };
      return body.hits.map((hit) => {
        const levels = ["lvl0", "lvl1", "lvl2", "lvl3", "lvl4", "lvl5", "lvl6"]
          .map((l) => hit.hierarchy[l])
          .filter((v): v is string => !!v);
        const url = new URL(hit.url, origin);
        return {
          id: hit.objectID,
          title: levels.at(-1) ?? hit.url,
          page: levels.slice(0, -1).join(" › "),
          url: url.origin === origin ? url.pathname + url.hash : url.href,
          excerpt: stripTags(hit._snippetResult?.content?.value ?? hit.content ?? ""),
          kind: "page",
        };
      });
    },
  };
}

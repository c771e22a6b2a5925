// The MiniSearch options of the local search index. The build serialises an index made with
// them and the browser loads it with the same options, so both sides import this one object.
export const searchFields = ["title", "page", "text"] as const;
export const storeFields = ["title", "page", "url", "kind", "excerpt", "tags"] as const;

export const indexOptions = {
  idField: "id",
  fields: [...searchFields],
  storeFields: [...storeFields],
};

export const searchOptions = {
  boost: { title: 4, page: 1.5 },
  prefix: true,
  fuzzy: 0.15,
  combineWith: "AND" as const,
};

export interface StoredResult {
  id: string;
  title: string;
  page: string;
  url: string;
  kind: string;
  excerpt: string;
  tags: string[];
}

// The site's one search client, created on first use.
import { searchIndexUrl } from "virtual:aiem/routes";
import { createDocSearch, createLocalSearch, type SearchClient } from "./search-client.js";

let client: SearchClient | undefined;

export function siteSearch(): SearchClient {
  client ??= __DOCSEARCH__
    ? createDocSearch(__DOCSEARCH__)
    : createLocalSearch({ indexUrl: searchIndexUrl, base: import.meta.env.BASE_URL });
  return client;
}

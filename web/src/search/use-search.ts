// Runs a query against the site's search client and tracks its state for the search box and
// the search page. Only the latest query's answer is kept.
import { useEffect, useRef, useState } from "react";
import type { SearchHit } from "./search-client.js";
import { siteSearch } from "./site-search.js";

export type SearchState =
  | { status: "idle" }
  | { status: "loading"; query: string }
  | { status: "error"; query: string; error: unknown }
  | { status: "done"; query: string; hits: SearchHit[] };

export function useSearch(query: string, limit = 20): SearchState {
  const [state, setState] = useState<SearchState>({ status: "idle" });
  const latest = useRef(0);
  const trimmed = query.trim();
  useEffect(() => {
    const id = ++latest.current;
    if (!trimmed) {
      setState({ status: "idle" });
      return;
    }
    setState((s) => (s.status === "done" ? s : { status: "loading", query: trimmed }));
    siteSearch()
      .search(trimmed, limit)
      .then(
        (hits) => id === latest.current && setState({ status: "done", query: trimmed, hits }),
        (error: unknown) => id === latest.current && setState({ status: "error", query: trimmed, error }),
      );
  }, [trimmed, limit]);
  return state;
}

/** Starts loading the index as soon as search opens, before the first keystroke. */
export function usePrepareSearch(): { failed: boolean } {
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    siteSearch()
      .prepare()
      .then(
        () => setFailed(false),
        () => setFailed(true),
      );
  }, []);
  return { failed };
}

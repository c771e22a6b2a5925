// The search page (search?q=...): the same search as the dialog, with more results and a URL
// that can be shared.
import { useEffect, useState } from "react";
import { navigate } from "../routing/navigation.js";
import { SearchHits, SearchMessages } from "../search/search-results.js";
import { usePrepareSearch, useSearch } from "../search/use-search.js";

export function SearchPage() {
  const [query, setQuery] = useState(() => new URLSearchParams(window.location.search).get("q") ?? "");
  const state = useSearch(query, 50);
  const { failed } = usePrepareSearch();
  useEffect(() => {
    const url = new URL(window.location.href);
    if ((url.searchParams.get("q") ?? "") === query) return;
    if (query) url.searchParams.set("q", query);
    else url.searchParams.delete("q");
    navigate(url.href, { replace: true });
  }, [query]);
  useEffect(() => {
    const onPop = () => setQuery(new URLSearchParams(window.location.search).get("q") ?? "");
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  return (
    <div className="search-page">
      <h1>{query.trim() ? `Search results for "${query.trim()}"` : "Search the documentation"}</h1>
      {/* biome-ignore lint/a11y/useSemanticElements: the form is the landmark; a <search> around it would repeat the role */}
      <form className="search-page-form" role="search" onSubmit={(e) => e.preventDefault()}>
        <label htmlFor="search-page-input">Search</label>
        <input
          id="search-page-input"
          type="search"
          value={query}
          autoComplete="off"
          onChange={(e) => setQuery(e.target.value)}
        />
      </form>
      {state.status === "done" && state.hits.length > 0 && (
        <p role="status">
          {state.hits.length === 50
            ? "The first 50 results"
            : `${state.hits.length} result${state.hits.length === 1 ? "" : "s"}`}
        </p>
      )}
      <SearchMessages state={state} prepareFailed={failed} />
      <SearchHits state={state} />
    </div>
  );
}

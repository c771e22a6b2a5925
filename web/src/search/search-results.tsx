// The messages and result list that the search box and the search page share.
import type { Ref } from "react";
import type { SearchState } from "./use-search.js";

export function SearchMessages({ state, prepareFailed }: { state: SearchState; prepareFailed: boolean }) {
  if (state.status === "error" || (state.status === "idle" && prepareFailed)) {
    return (
      <div className="search-message" role="alert">
        <p className="search-message-title">Unable to fetch results</p>
        <p>You might want to check your network connection.</p>
      </div>
    );
  }
  if (state.status === "done" && state.hits.length === 0) {
    return (
      <p className="search-message" role="status">
        No results for &quot;<strong>{state.query}</strong>&quot;
      </p>
    );
  }
  if (state.status === "loading") {
    return (
      <p className="search-message" role="status">
        Searching…
      </p>
    );
  }
  return null;
}

export function SearchHits({
  state,
  listRef,
  onPick,
}: {
  state: SearchState;
  listRef?: Ref<HTMLUListElement>;
  onPick?: () => void;
}) {
  if (state.status !== "done" || state.hits.length === 0) return null;
  return (
    <ul className="search-hits" ref={listRef} aria-label={`Results for ${state.query}`}>
      {state.hits.map((hit) => (
        <li key={hit.id}>
          <a className="search-hit" href={hit.url} onClick={onPick}>
            <span className="search-hit-page">{hit.page}</span>
            <span className="search-hit-title">{hit.title}</span>
            {hit.excerpt && <span className="search-hit-excerpt">{hit.excerpt}</span>}
          </a>
        </li>
      ))}
    </ul>
  );
}

// The search dialog that the navbar button, Ctrl/Cmd+K and "/" open. Its code is small and ships
// with the page; the index and the search library load when it first opens.
import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { siteUrl } from "../routing/site-url.js";
import { navigate } from "../routing/navigation.js";
import { CloseIcon, SearchIcon } from "../chrome/icons.js";
import { SearchHits, SearchMessages } from "./search-results.js";
import { usePrepareSearch, useSearch } from "./use-search.js";

export function SearchModal({ onClose }: { onClose: () => void }) {
  const [query, setQuery] = useState("");
  const state = useSearch(query, 12);
  const { failed } = usePrepareSearch();
  const input = useRef<HTMLInputElement>(null);
  const list = useRef<HTMLUListElement>(null);

  useEffect(() => {
    const previous = document.activeElement as HTMLElement | null;
    input.current?.focus();
    document.body.classList.add("scroll-locked");
    return () => {
      document.body.classList.remove("scroll-locked");
      previous?.focus?.();
    };
  }, []);

  const links = () => [...(list.current?.querySelectorAll<HTMLAnchorElement>("a") ?? [])];
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Escape") {
      event.preventDefault();
      onClose();
      return;
    }
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    const all = links();
    if (all.length === 0) return;
    event.preventDefault();
    const index = all.indexOf(document.activeElement as HTMLAnchorElement);
    const next = event.key === "ArrowDown" ? Math.min(index + 1, all.length - 1) : index - 1;
    if (next < 0) input.current?.focus();
    else all[next]!.focus();
  };

  const searchPage = siteUrl(`search?q=${encodeURIComponent(query.trim())}`);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the backdrop closes on a pointer; Escape closes from the keyboard
    <div className="search-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        className="search-modal"
        role="dialog"
        aria-modal="true"
        aria-label="Search the documentation"
        onKeyDown={onKeyDown}
      >
        {/* biome-ignore lint/a11y/useSemanticElements: the form is the landmark; a <search> around it would repeat the role */}
        <form
          className="search-form"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            const first = links()[0];
            onClose();
            navigate(first ? first.href : searchPage);
          }}
        >
          <SearchIcon />
          <label htmlFor="search-modal-input" className="visually-hidden">
            Search the documentation
          </label>
          <input
            id="search-modal-input"
            ref={input}
            type="search"
            placeholder="Search docs, API and Python reference"
            autoComplete="off"
            spellCheck={false}
            value={query}
            onChange={(e) => setQuery(e.target.value)}
          />
          <button type="button" className="icon-button" aria-label="Close search" onClick={onClose}>
            <CloseIcon />
          </button>
        </form>
        <div className="search-body">
          <SearchMessages state={state} prepareFailed={failed} />
          <SearchHits state={state} listRef={list} onPick={onClose} />
          {state.status === "idle" && !failed && (
            <p className="search-message search-hint">
              Search the guides, the API reference and the Python client reference.
            </p>
          )}
        </div>
        {state.status === "done" && state.hits.length > 0 && (
          <div className="search-footer">
            <a href={searchPage} onClick={onClose}>
              See all results for &quot;{state.query}&quot;
            </a>
          </div>
        )}
      </div>
    </div>
  );
}

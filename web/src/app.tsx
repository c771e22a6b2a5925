// The application shell: chrome around the current route's content, page loading states, search
// and the mobile drawer.
import { useCallback, useEffect, useLayoutEffect, useState, type ReactNode } from "react";
import { sidebar } from "virtual:aiem/routes";
import { AnnouncementBar } from "./chrome/announcement-bar.js";
import { Footer } from "./chrome/footer.js";
import { MobileDrawer, Navbar } from "./chrome/navbar.js";
import { rememberDocsVersion } from "./chrome/preferences.js";
import { ProgressBar } from "./chrome/progress-bar.js";
import { ApiNav, DocSidebar } from "./chrome/sidebar.js";
import { MobileTableOfContents, TableOfContents } from "./chrome/toc.js";
import { PageErrorBoundary } from "./pages/error-boundary.js";
import { HtmlContent } from "./pages/html-content.js";
import { NotFoundPage } from "./pages/not-found-page.js";
import { LoadError, LoadingSpinner } from "./pages/page-states.js";
import { savedScroll } from "./routing/navigation.js";
import { useRouteState, type RouteState } from "./routing/use-route-state.js";
import { SearchModal } from "./search/search-modal.js";
import { isSearchShortcut } from "./search/shortcut.js";
import type { Layout, SidebarItem } from "./site-types.js";

const SITE_NAME = "AI Engine Manager";

/** Walks the sidebar in reading order, for the previous / next links under a page. */
function flatten(items: SidebarItem[]): { label: string; path: string }[] {
  return items.flatMap((i) =>
    i.type === "link"
      ? [i]
      : [...(i.path !== undefined ? [{ label: i.label, path: i.path }] : []), ...flatten(i.items)],
  );
}
const readingOrder = flatten(sidebar);

function Pagination({ path }: { path: string }) {
  const index = readingOrder.findIndex((i) => i.path === path);
  if (index < 0) return null;
  const prev = readingOrder[index - 1];
  const next = readingOrder[index + 1];
  return (
    <nav className="pagination" aria-label="Docs pages">
      {prev ? (
        <a className="pagination-link" href={import.meta.env.BASE_URL + prev.path} rel="prev">
          <span className="pagination-label">Previous</span>
          <span className="pagination-title">{prev.label}</span>
        </a>
      ) : (
        <span />
      )}
      {next && (
        <a className="pagination-link pagination-next" href={import.meta.env.BASE_URL + next.path} rel="next">
          <span className="pagination-label">Next</span>
          <span className="pagination-title">{next.label}</span>
        </a>
      )}
    </nav>
  );
}

function scrollToHash(hash: string): boolean {
  if (!hash) return false;
  const el = document.getElementById(decodeURIComponent(hash.slice(1)));
  el?.scrollIntoView();
  return !!el;
}

function useScrollOnNavigation(state: RouteState): void {
  useLayoutEffect(() => {
    if (state.kind === "replace") return;
    if (state.kind === "pop") {
      const y = savedScroll();
      if (y !== undefined) {
        window.scrollTo(0, y);
        return;
      }
    }
    if (!scrollToHash(state.location.hash) && state.kind !== "initial") window.scrollTo(0, 0);
    if (state.kind === "push") document.getElementById("skip-target")?.focus({ preventScroll: true });
  }, [state]);
}

function Content({ state, retry }: { state: RouteState; retry: () => void }) {
  if (!state.route) return <NotFoundPage />;
  if (state.error !== undefined) return <LoadError error={state.error} onRetry={retry} />;
  if (!state.loaded) return <LoadingSpinner />;
  if (state.loaded.kind === "component") return <state.loaded.Component />;
  return <HtmlContent html={state.loaded.page.html} />;
}

function Main({ state, retry, layout }: { state: RouteState; retry: () => void; layout: Layout | "not-found" }) {
  const toc = state.loaded?.kind === "page" && layout === "doc" ? state.loaded.page.toc : [];
  const body = (
    <PageErrorBoundary resetKey={state.location.path}>
      <Content state={state} retry={retry} />
    </PageErrorBoundary>
  );
  if (layout !== "doc") {
    return (
      <main id="main" className={`main main-${layout}`} tabIndex={-1}>
        <div className="main-content">{body}</div>
      </main>
    );
  }
  return (
    <main id="main" className="main main-doc" tabIndex={-1}>
      <div className="doc-column">
        <MobileTableOfContents items={toc} />
        <article className="doc-article">{body}</article>
        {state.loaded && <Pagination path={state.location.path} />}
      </div>
      <div className="toc-column">
        <TableOfContents items={toc} />
      </div>
    </main>
  );
}

export function App() {
  const { state, pending, retry } = useRouteState();
  const [searchOpen, setSearchOpen] = useState(false);
  const [drawerOpen, setDrawerOpen] = useState(false);
  const layout: Layout | "not-found" = state.route?.layout ?? "not-found";
  const path = state.location.path;

  useScrollOnNavigation(state);
  useEffect(() => {
    const title =
      state.loaded?.kind === "page" ? state.loaded.page.title : state.route ? state.route.title : "Page Not Found";
    document.title = state.route?.path === "" ? SITE_NAME : `${title} | ${SITE_NAME}`;
  }, [state]);
  useEffect(() => {
    rememberDocsVersion();
  }, []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: navigating closes the drawer
  useEffect(() => {
    setDrawerOpen(false);
  }, [path]);
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!isSearchShortcut(event)) return;
      event.preventDefault();
      setSearchOpen(true);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  useEffect(() => {
    const desktop = window.matchMedia("(min-width: 997px)");
    const onChange = () => desktop.matches && setDrawerOpen(false);
    desktop.addEventListener("change", onChange);
    return () => desktop.removeEventListener("change", onChange);
  }, []);
  const closeSearch = useCallback(() => setSearchOpen(false), []);
  const closeDrawer = useCallback(() => setDrawerOpen(false), []);

  let side: ReactNode = null;
  if (layout === "doc") side = <DocSidebar items={sidebar} path={path} />;
  else if (layout === "api" && state.loaded?.kind === "page") side = <ApiNav toc={state.loaded.page.toc} />;

  return (
    <>
      <div id="skip-target" tabIndex={-1} />
      <a className="skip-link" href="#main">
        Skip to main content
      </a>
      <AnnouncementBar />
      <Navbar
        path={path}
        onOpenSearch={() => setSearchOpen(true)}
        drawerOpen={drawerOpen}
        onToggleDrawer={() => setDrawerOpen(!drawerOpen)}
      />
      <ProgressBar active={pending} />
      <MobileDrawer open={drawerOpen} onClose={closeDrawer} path={path}>
        {side}
      </MobileDrawer>
      <div className={`page page-${layout}`}>
        {side && <aside className="sidebar-column">{side}</aside>}
        <Main state={state} retry={retry} layout={layout} />
      </div>
      <Footer />
      {searchOpen && <SearchModal onClose={closeSearch} />}
    </>
  );
}

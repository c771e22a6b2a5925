// The docs sidebar (one for every documentation page) and the API reference's navigation, which
// takes the sidebar's place on api/. Categories holding the current page start expanded.
import { useEffect, useId, useMemo, useRef, useState } from "react";
import { observeLinks } from "../routing/prefetch.js";
import { siteUrl } from "../routing/site-url.js";
import type { SidebarItem, TocItem } from "../site-types.js";
import { ChevronIcon } from "./icons.js";

function contains(item: SidebarItem, path: string): boolean {
  if (item.type === "link") return item.path === path;
  return item.path === path || item.items.some((i) => contains(i, path));
}

function Category({ item, path }: { item: Extract<SidebarItem, { type: "category" }>; path: string }) {
  const active = contains(item, path);
  const [open, setOpen] = useState(active);
  useEffect(() => {
    if (active) setOpen(true);
  }, [active]);
  const listId = useId();
  return (
    <li className={`sidebar-category ${open ? "" : "sidebar-collapsed"}`}>
      <div className="sidebar-category-row">
        {item.path !== undefined ? (
          <a className="sidebar-link" href={siteUrl(item.path)} aria-current={item.path === path ? "page" : undefined}>
            {item.label}
          </a>
        ) : (
          <button
            type="button"
            className="sidebar-link sidebar-category-label"
            aria-expanded={open}
            aria-controls={listId}
            onClick={() => setOpen(!open)}
          >
            {item.label}
          </button>
        )}
        <button
          type="button"
          className="sidebar-toggle"
          aria-expanded={open}
          aria-controls={listId}
          aria-label={`${open ? "Collapse" : "Expand"} ${item.label}`}
          onClick={() => setOpen(!open)}
        >
          <ChevronIcon />
        </button>
      </div>
      {/* Collapsed categories render no items: the Python reference alone has over a hundred. */}
      <ul id={listId} className="sidebar-list" hidden={!open}>
        {open &&
          item.items.map((child, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: labels repeat and the list is fixed for a page
            <Item key={`${child.label}-${i}`} item={child} path={path} />
          ))}
      </ul>
    </li>
  );
}

function Item({ item, path }: { item: SidebarItem; path: string }) {
  if (item.type === "category") return <Category item={item} path={path} />;
  return (
    <li>
      <a className="sidebar-link" href={siteUrl(item.path)} aria-current={item.path === path ? "page" : undefined}>
        {item.label}
      </a>
    </li>
  );
}

export function DocSidebar({ items, path }: { items: SidebarItem[]; path: string }) {
  const nav = useRef<HTMLElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new page renders new links to observe
  useEffect(() => observeLinks(nav.current), [path]);
  return (
    <nav className="sidebar" aria-label="Docs sidebar" ref={nav}>
      <ul className="sidebar-list">
        {items.map((item, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: labels repeat and the list is fixed for a page
          <Item key={`${item.label}-${i}`} item={item} path={path} />
        ))}
      </ul>
    </nav>
  );
}

/** Long CamelCase names may wrap between their words rather than inside one. */
function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?<=[a-z])(?=[A-Z])/);
  return (
    <>
      {parts.map((part, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one fixed text, never reordered
        <span key={i}>
          {i > 0 && <wbr />}
          {part}
        </span>
      ))}
    </>
  );
}

interface ApiGroup {
  heading: TocItem;
  items: TocItem[];
}

/** The API reference's navigation: services and type groups, each listing its methods or types. */
export function ApiNav({ toc }: { toc: TocItem[] }) {
  const [filter, setFilter] = useState("");
  const groups = useMemo(() => {
    const out: ApiGroup[] = [];
    for (const t of toc) {
      if (t.level === 2) out.push({ heading: t, items: [] });
      else out.at(-1)?.items.push(t);
    }
    return out;
  }, [toc]);
  const filterId = useId();
  const needle = filter.trim().toLowerCase();
  const visible = needle
    ? groups
        .map((g) => ({
          ...g,
          items: g.heading.text.toLowerCase().includes(needle)
            ? g.items
            : g.items.filter((i) => i.text.toLowerCase().includes(needle)),
        }))
        .filter((g) => g.items.length > 0 || g.heading.text.toLowerCase().includes(needle))
    : groups;
  return (
    <nav className="sidebar api-nav" aria-label="API reference">
      <div className="api-nav-filter">
        <label htmlFor={filterId} className="visually-hidden">
          Filter the API reference
        </label>
        <input
          id={filterId}
          type="search"
          placeholder="Filter services, methods, types"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
      </div>
      <ul className="sidebar-list">
        {visible.map((g) => (
          <ApiGroupItem key={g.heading.id} group={g} forceOpen={needle !== ""} />
        ))}
      </ul>
    </nav>
  );
}

function ApiGroupItem({ group, forceOpen }: { group: ApiGroup; forceOpen: boolean }) {
  const [open, setOpen] = useState(false);
  const expanded = open || forceOpen;
  const listId = useId();
  return (
    <li className={`sidebar-category ${expanded ? "" : "sidebar-collapsed"}`}>
      <div className="sidebar-category-row">
        <a className="sidebar-link" href={`#${group.heading.id}`}>
          <Breakable text={group.heading.text} />
        </a>
        {group.items.length > 0 && (
          <button
            type="button"
            className="sidebar-toggle"
            aria-expanded={expanded}
            aria-controls={listId}
            aria-label={`${expanded ? "Collapse" : "Expand"} ${group.heading.text}`}
            onClick={() => setOpen(!expanded)}
          >
            <ChevronIcon />
          </button>
        )}
      </div>
      {group.items.length > 0 && (
        <ul id={listId} className="sidebar-list" hidden={!expanded}>
          {group.items.map((i) => (
            <li key={i.id}>
              <a className="sidebar-link" href={`#${i.id}`}>
                <Breakable text={i.text} />
              </a>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

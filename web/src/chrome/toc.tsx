// The table of contents of a page: its h2 and h3 headings. On wide screens it sits beside the
// content and marks the section being read; at 996px and narrower it folds into a disclosure
// above the content.
import { useEffect, useState } from "react";
import type { TocItem } from "../site-types.js";

const MIN_LEVEL = 2;
const MAX_LEVEL = 3;

interface Node {
  item: TocItem;
  children: TocItem[];
}

export function tocTree(items: TocItem[]): Node[] {
  const nodes: Node[] = [];
  for (const item of items) {
    if (item.level < MIN_LEVEL || item.level > MAX_LEVEL) continue;
    if (item.level === MIN_LEVEL || nodes.length === 0) nodes.push({ item, children: [] });
    else nodes.at(-1)!.children.push(item);
  }
  return nodes;
}

function useActiveHeading(items: TocItem[]): string | undefined {
  const [active, setActive] = useState<string>();
  useEffect(() => {
    let frame = 0;
    const update = () => {
      frame = 0;
      const offset = 100;
      let current: string | undefined;
      for (const item of items) {
        const el = document.getElementById(item.id);
        if (el && el.getBoundingClientRect().top <= offset) current = item.id;
      }
      setActive(current ?? items[0]?.id);
    };
    const onScroll = () => {
      if (!frame) frame = requestAnimationFrame(update);
    };
    update();
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => {
      window.removeEventListener("scroll", onScroll);
      if (frame) cancelAnimationFrame(frame);
    };
  }, [items]);
  return active;
}

function TocList({ nodes, active }: { nodes: Node[]; active?: string }) {
  return (
    <ul className="toc-list">
      {nodes.map(({ item, children }) => (
        <li key={item.id}>
          <a href={`#${item.id}`} className={item.id === active ? "toc-active" : undefined}>
            {item.text}
          </a>
          {children.length > 0 && (
            <ul className="toc-list">
              {children.map((c) => (
                <li key={c.id}>
                  <a href={`#${c.id}`} className={c.id === active ? "toc-active" : undefined}>
                    {c.text}
                  </a>
                </li>
              ))}
            </ul>
          )}
        </li>
      ))}
    </ul>
  );
}

export function TableOfContents({ items }: { items: TocItem[] }) {
  const nodes = tocTree(items);
  const active = useActiveHeading(items);
  if (nodes.length === 0) return null;
  return (
    <nav className="toc toc-desktop" aria-label="On this page">
      <p className="toc-title">On this page</p>
      <TocList nodes={nodes} active={active} />
    </nav>
  );
}

export function MobileTableOfContents({ items }: { items: TocItem[] }) {
  const nodes = tocTree(items);
  if (nodes.length === 0) return null;
  return (
    <details className="toc-mobile">
      <summary>On this page</summary>
      <nav aria-label="On this page (collapsed)">
        <TocList nodes={nodes} />
      </nav>
    </details>
  );
}

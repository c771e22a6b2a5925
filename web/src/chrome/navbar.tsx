// The top navigation: brand, section links, dropdowns of sibling product docs, the docs version,
// search, the theme switch and the Learn More / Request a Demo buttons. At 996px and narrower the
// links move into a drawer that the menu button opens.
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { siteUrl } from "../routing/site-url.js";
import { learnMore, requestDemo, siblingDocs, type ExternalLink } from "../site-config.js";
import { SITE_VERSION } from "../site-types.js";
import { ChevronIcon, CloseIcon, ExternalIcon, Logo, MenuIcon, MoonIcon, SearchIcon, SunIcon } from "./icons.js";
import { currentTheme, setTheme, type Theme } from "./preferences.js";

const sectionLinks = [
  {
    label: "Guides",
    path: "get-started/what-is-ai-engine-manager",
    match: /^(get-started|user-guide|administration)\//,
  },
  { label: "Python client", path: "py/installation", match: /^py\// },
  { label: "API", path: "api/", match: /^api\/$/ },
];

function Dropdown({ label, children, className = "" }: { label: string; children: ReactNode; className?: string }) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const root = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const onDocument = (event: Event) => {
      if (!root.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") {
        setOpen(false);
        button.current?.focus();
      }
    };
    document.addEventListener("pointerdown", onDocument);
    document.addEventListener("focusin", onDocument);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("pointerdown", onDocument);
      document.removeEventListener("focusin", onDocument);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);
  return (
    <div className={`dropdown ${className} ${open ? "dropdown-open" : ""}`} ref={root}>
      <button
        type="button"
        className="navbar-link dropdown-toggle"
        aria-expanded={open}
        aria-controls={id}
        ref={button}
        onClick={() => setOpen(!open)}
      >
        {label}
        <span className="dropdown-caret" aria-hidden="true" />
      </button>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: a link chosen from the keyboard fires click too */}
      <ul className="dropdown-menu" id={id} hidden={!open} onClick={() => setOpen(false)}>
        {children}
      </ul>
    </div>
  );
}

function ExternalItem({ link }: { link: ExternalLink }) {
  return (
    <li>
      <a className="dropdown-link" href={link.href} target="_blank" rel="noopener noreferrer">
        {link.label}
        <ExternalIcon />
        <span className="visually-hidden"> (opens in a new tab)</span>
      </a>
    </li>
  );
}

export function VersionMenu() {
  return (
    <Dropdown label={SITE_VERSION} className="version-dropdown">
      <li>
        <a className="dropdown-link dropdown-link-active" href={siteUrl("")} aria-current="true">
          {SITE_VERSION} (current)
        </a>
      </li>
      <li>
        <a className="dropdown-link" href={siteUrl("release-notes")}>
          All releases
        </a>
      </li>
    </Dropdown>
  );
}

export function ThemeToggle() {
  const [theme, setState] = useState<Theme>(currentTheme);
  const next: Theme = theme === "dark" ? "light" : "dark";
  return (
    <button
      type="button"
      className="icon-button theme-toggle"
      aria-label={`Switch to ${next} mode (currently ${theme} mode)`}
      title={`Switch to ${next} mode`}
      onClick={() => {
        setTheme(next);
        setState(next);
      }}
    >
      {theme === "dark" ? <MoonIcon /> : <SunIcon />}
    </button>
  );
}

const isMac = typeof navigator !== "undefined" && /Mac|iPhone|iPad/.test(navigator.platform);

function SearchButton({ onOpen }: { onOpen: () => void }) {
  return (
    <button
      type="button"
      className="search-button"
      onClick={onOpen}
      aria-keyshortcuts={isMac ? "Meta+K /" : "Control+K /"}
    >
      <SearchIcon />
      <span className="search-button-label">Search</span>
      <span className="search-button-keys" aria-hidden="true">
        <kbd>{isMac ? "⌘" : "Ctrl"}</kbd>
        <kbd>K</kbd>
      </span>
    </button>
  );
}

function CtaButtons() {
  return (
    <>
      <a className="button button-secondary" href={learnMore.href} target="_blank" rel="noopener noreferrer">
        {learnMore.label}
      </a>
      <a className="button button-primary" href={requestDemo.href} target="_blank" rel="noopener noreferrer">
        {requestDemo.label}
      </a>
    </>
  );
}

export interface NavbarProps {
  path: string;
  onOpenSearch: () => void;
  drawerOpen: boolean;
  onToggleDrawer: () => void;
}

export function Navbar({ path, onOpenSearch, drawerOpen, onToggleDrawer }: NavbarProps) {
  return (
    <header className="navbar">
      <nav className="navbar-inner" aria-label="Main">
        <button
          type="button"
          className="icon-button navbar-menu-button"
          aria-label="Open the navigation menu"
          aria-expanded={drawerOpen}
          aria-controls="mobile-drawer"
          onClick={onToggleDrawer}
        >
          <MenuIcon />
        </button>
        <a className="navbar-brand" href={siteUrl("")}>
          <Logo />
          <span className="navbar-title">AI Engine Manager</span>
        </a>
        <div className="navbar-items navbar-desktop">
          {sectionLinks.map((l) => (
            <a
              key={l.path}
              className="navbar-link"
              href={siteUrl(l.path)}
              aria-current={l.match.test(path) ? "page" : undefined}
            >
              {l.label}
            </a>
          ))}
          {siblingDocs.map((group) => (
            <Dropdown key={group.label} label={group.label}>
              {group.items.map((item) => (
                <ExternalItem key={item.href} link={item} />
              ))}
            </Dropdown>
          ))}
        </div>
        <div className="navbar-items navbar-right">
          <div className="navbar-desktop">
            <VersionMenu />
          </div>
          <SearchButton onOpen={onOpenSearch} />
          <ThemeToggle />
          <div className="navbar-desktop navbar-cta">
            <CtaButtons />
          </div>
        </div>
      </nav>
    </header>
  );
}

/** The mobile drawer: the navbar's links first, then the page's sidebar. */
export function MobileDrawer({
  open,
  onClose,
  path,
  children,
}: {
  open: boolean;
  onClose: () => void;
  path: string;
  children: ReactNode;
}) {
  const panel = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!open) return;
    const previous = document.activeElement as HTMLElement | null;
    panel.current?.querySelector<HTMLElement>("button, a")?.focus();
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") onClose();
    };
    document.addEventListener("keydown", onKey);
    document.body.classList.add("scroll-locked");
    return () => {
      document.removeEventListener("keydown", onKey);
      document.body.classList.remove("scroll-locked");
      previous?.focus?.();
    };
  }, [open, onClose]);
  if (!open) return null;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: the backdrop closes on a pointer; Escape closes from the keyboard
    // biome-ignore lint/a11y/useKeyWithClickEvents: Escape closes the drawer from the keyboard (the keydown listener)
    <div className="drawer-backdrop" onClick={onClose}>
      {/* biome-ignore lint/a11y/useKeyWithClickEvents: closes when a link inside is chosen; links fire click from the keyboard too */}
      <div
        id="mobile-drawer"
        className="drawer"
        role="dialog"
        aria-modal="true"
        aria-label="Navigation menu"
        ref={panel}
        onClick={(e) => {
          e.stopPropagation();
          if ((e.target as Element).closest("a")) onClose();
        }}
      >
        <div className="drawer-header">
          <a className="navbar-brand" href={siteUrl("")}>
            <Logo />
            <span className="navbar-title">AI Engine Manager</span>
          </a>
          <button type="button" className="icon-button" aria-label="Close the navigation menu" onClick={onClose}>
            <CloseIcon />
          </button>
        </div>
        <nav className="drawer-section" aria-label="Menu">
          <ul className="drawer-links">
            {sectionLinks.map((l) => (
              <li key={l.path}>
                <a href={siteUrl(l.path)} aria-current={l.match.test(path) ? "page" : undefined}>
                  {l.label}
                </a>
              </li>
            ))}
          </ul>
          {siblingDocs.map((group) => (
            <details key={group.label} className="drawer-group">
              <summary>
                {group.label}
                <ChevronIcon />
              </summary>
              <ul className="drawer-links">
                {group.items.map((item) => (
                  <ExternalItem key={item.href} link={item} />
                ))}
              </ul>
            </details>
          ))}
          <div className="drawer-row">
            <VersionMenu />
          </div>
          <div className="drawer-row drawer-cta">
            <CtaButtons />
          </div>
        </nav>
        {children}
      </div>
    </div>
  );
}

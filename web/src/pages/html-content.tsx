// Renders a page's build-time HTML and wires up what the HTML cannot do by itself: copy buttons
// on code blocks, prefetching of the pages it links to, and the API reference's "Try it" panels,
// whose code loads only when a reader opens one.
import { useEffect, useRef } from "react";
import { observeLinks } from "../routing/prefetch.js";

async function copy(button: HTMLButtonElement): Promise<void> {
  const code = button.parentElement?.querySelector("pre")?.textContent ?? "";
  try {
    await navigator.clipboard.writeText(code);
    button.textContent = "Copied";
  } catch {
    button.textContent = "Press Ctrl+C";
    const range = document.createRange();
    range.selectNodeContents(button.parentElement!.querySelector("pre")!);
    window.getSelection()?.removeAllRanges();
    window.getSelection()?.addRange(range);
  }
  setTimeout(() => (button.textContent = "Copy"), 2000);
}

// Open panels by their slot, so a second click closes them and leaving the page unmounts them.
const openPanels = new Map<HTMLElement, () => void>();

function closeAllPanels(): void {
  for (const close of openPanels.values()) close();
  openPanels.clear();
}

async function toggleTryIt(button: HTMLButtonElement): Promise<void> {
  const slot = button.closest<HTMLElement>(".try-it-slot");
  if (!slot) return;
  const close = openPanels.get(slot);
  if (close) {
    close();
    openPanels.delete(slot);
    button.setAttribute("aria-expanded", "false");
    return;
  }
  button.setAttribute("aria-expanded", "true");
  let container = slot.querySelector<HTMLElement>(".try-it-container");
  if (!container) {
    container = document.createElement("div");
    container.className = "try-it-container";
    slot.appendChild(container);
  }
  try {
    const { mountTryIt } = await import("../try-it/try-it-panel.js");
    openPanels.set(slot, mountTryIt(container, button.dataset.try!, button.dataset.sample ?? "{}"));
  } catch (error) {
    container.textContent = `The Try it panel could not be loaded: ${String(error)}`;
    button.setAttribute("aria-expanded", "false");
  }
}

export function HtmlContent({ html, className = "markdown" }: { html: string; className?: string }) {
  const root = useRef<HTMLDivElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: new HTML renders new links to observe
  useEffect(() => observeLinks(root.current), [html]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: panels belong to the HTML they were opened in
  useEffect(() => closeAllPanels, [html]);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: delegates clicks of the buttons inside the HTML
    // biome-ignore lint/a11y/useKeyWithClickEvents: the buttons it delegates for fire click from the keyboard too
    <div
      ref={root}
      className={className}
      onClick={(event) => {
        const button = (event.target as Element).closest<HTMLButtonElement>("button");
        if (!button) return;
        if (button.classList.contains("copy-button")) void copy(button);
        else if (button.classList.contains("try-it-button")) void toggleTryIt(button);
      }}
      // biome-ignore lint/security/noDangerouslySetInnerHtml: the HTML is our own documentation, rendered at build time
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
}

// What the parts of one API reference page share while it is built: its anchors, table of
// contents and search entries, the comment and type renderers, and the samples of its methods.
import type { DescMethod, FileRegistry } from "@bufbuild/protobuf";
import type { SearchDoc, TocItem } from "../src/site-types.js";
import { SEARCH_TAG } from "../src/site-types.js";
import { commentHtml, type SymbolTable } from "./api-comment-html.js";
import type { ApiReferenceOptions } from "./api-reference.js";
import { createSampler } from "./api-samples.js";
import { createTypeRenderer } from "./api-type-html.js";

export interface ApiPage {
  readonly pageTitle: string;
  /** Every anchor the page holds. */
  readonly ids: Set<string>;
  readonly toc: TocItem[];
  readonly searchDocs: SearchDoc[];
  comment(text: string): string;
  addDoc(id: string, title: string, page: string, text: string): void;
  sample(method: DescMethod): ReturnType<ReturnType<typeof createSampler>>;
  readonly types: ReturnType<typeof createTypeRenderer>;
}

export function createApiPage(
  registry: FileRegistry,
  options: ApiReferenceOptions,
  symbols: SymbolTable,
  noteType: (typeName: string) => void,
): ApiPage {
  const pageTitle = options.title ?? "API reference";
  const ids = new Set<string>();
  const searchDocs: SearchDoc[] = [];
  const comment = (text: string) => commentHtml(text, symbols);
  const addDoc = (id: string, title: string, page: string, text: string) => {
    searchDocs.push({
      id: `${options.route.replace(/\/$/, "")}:${id}`,
      title,
      page,
      url: `${options.route}#${id}`,
      text,
      kind: "api",
      tags: [SEARCH_TAG],
    });
  };
  return {
    pageTitle,
    ids,
    toc: [...options.introToc],
    searchDocs,
    comment,
    addDoc,
    sample: createSampler(registry),
    types: createTypeRenderer({ ids, symbols, pageTitle, comment, addDoc, noteType }),
  };
}

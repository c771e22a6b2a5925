// Paging through a list call to its end, the same way for Connect clients and REST.

export interface Page<T> {
  readonly items: readonly T[];
  readonly nextPageToken: string;
}

/**
 * Every item of a list, fetched page by page until the token runs out; `maxPages` stops a list
 * whose token never does (a paging bug) with a failure instead of a hang.
 */
export async function listAllPages<T>(
  fetchPage: (pageToken: string) => Promise<Page<T>>,
  maxPages = 1_000,
): Promise<{ items: T[]; pages: number }> {
  const items: T[] = [];
  let pageToken = "";
  for (let pages = 1; pages <= maxPages; pages++) {
    const page = await fetchPage(pageToken);
    items.push(...page.items);
    if (!page.nextPageToken) return { items, pages };
    pageToken = page.nextPageToken;
  }
  throw new Error(`the list still had a next page after ${maxPages} pages`);
}

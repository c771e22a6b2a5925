// Read-your-writes for the services that read the catalogue from their copy: a lookup that finds
// a reference missing or unusable may be answering from a copy that has not yet applied a write
// the catalogue already acknowledged. Before such an answer goes out, the copy catches up with
// the catalogue stream (bounded) and the lookup runs once more. A lookup that succeeds costs
// nothing extra.
import type { CatalogueReadModel } from "./read-model.js";

/** How long an answer that a catalogue reference is missing or unusable waits for the copy. */
export const CATCH_UP_WAIT = 5_000;

/**
 * Runs `lookup`; when it throws, waits until `catalogue` has applied everything the catalogue
 * stream holds (at most `waitMs`), then runs it again and returns or throws what that run does.
 * `lookup` must only read the copy: it may run twice.
 */
export async function caughtUpFirst<T>(
  catalogue: Pick<CatalogueReadModel, "caughtUp"> | undefined,
  lookup: () => T,
  waitMs = CATCH_UP_WAIT,
): Promise<T> {
  try {
    return lookup();
  } catch (err) {
    if (!catalogue) throw err;
    await catalogue.caughtUp(Date.now() + waitMs);
    return lookup();
  }
}

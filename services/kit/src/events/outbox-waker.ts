// The outbox relay's wake-up: a commit that enqueued asks for a round now instead of at the next
// poll, after a delay that lets the committing call answer first (see PGLITE_WAKE_DELAY).

export interface OutboxWaker {
  /** Asks for a round, once `delay` ms have passed (at once with no delay). */
  wake(): void;
  /** Whether a wake came since the last take; a taken wake is answered, so it is cleared. */
  take(): boolean;
  /** Aborts when a wake comes; a sleeping relay waits on it. */
  readonly signal: AbortSignal;
  /** Drops a wake still waiting for its delay. */
  cancel(): void;
}

export function createOutboxWaker(delay: number): OutboxWaker {
  let controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  return {
    wake() {
      if (delay <= 0) {
        controller.abort();
        return;
      }
      timer ??= setTimeout(() => {
        timer = undefined;
        controller.abort();
      }, delay).unref();
    },
    take() {
      if (!controller.signal.aborted) return false;
      controller = new AbortController();
      return true;
    },
    get signal() {
      return controller.signal;
    },
    cancel() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

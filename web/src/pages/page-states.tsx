// What the content area shows while a page loads and when its chunk could not be loaded.
import { useEffect, useState } from "react";

export const SPINNER_DELAY_MS = 200;

/** A spinner that appears only if loading takes longer than 200 ms, so fast loads do not flicker. */
export function LoadingSpinner() {
  const [visible, setVisible] = useState(false);
  useEffect(() => {
    const timer = setTimeout(() => setVisible(true), SPINNER_DELAY_MS);
    return () => clearTimeout(timer);
  }, []);
  return (
    <div className="page-loading" role="status" aria-live="polite">
      {visible && (
        <>
          <span className="spinner" aria-hidden="true" />
          <span className="visually-hidden">Loading the page</span>
        </>
      )}
    </div>
  );
}

export function LoadError({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  return (
    <div className="page-error" role="alert">
      <h1>This page could not be loaded.</h1>
      <p className="page-error-text">{String(error)}</p>
      <button type="button" className="button button-primary" onClick={onRetry}>
        Retry
      </button>
    </div>
  );
}

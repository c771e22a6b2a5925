// A thin bar at the top of the window while a navigation waits for its page. It appears only
// after 200 ms, so fast navigations show nothing.
import { useEffect, useState } from "react";

export const PROGRESS_DELAY_MS = 200;

export function ProgressBar({ active }: { active: boolean }) {
  const [shown, setShown] = useState(false);
  useEffect(() => {
    if (!active) {
      setShown(false);
      return;
    }
    const timer = setTimeout(() => setShown(true), PROGRESS_DELAY_MS);
    return () => clearTimeout(timer);
  }, [active]);
  if (!shown) return null;
  return (
    <div className="progress-bar" aria-hidden="true">
      <div className="progress-bar-value" />
    </div>
  );
}

// The announcement bar. Its dismissal is remembered in local storage; the boot script in <head>
// hides a dismissed bar before the first paint, so it never flashes.
import { useState } from "react";
import { siteUrl } from "../routing/site-url.js";
import { CloseIcon } from "./icons.js";
import { dismissAnnouncement, isAnnouncementDismissed } from "./preferences.js";

export function AnnouncementBar() {
  const [dismissed, setDismissed] = useState(isAnnouncementDismissed);
  if (dismissed) return null;
  return (
    <section className="announcement-bar" aria-label="Announcement">
      <p className="announcement-content">
        New in 1.3.0: sandbox engines give programs and AI agents an isolated machine with files, processes and ports.{" "}
        <a href={siteUrl("user-guide/sandbox-engine/create")}>Create one</a>
      </p>
      <button
        type="button"
        className="icon-button announcement-close"
        aria-label="Close the announcement"
        onClick={() => {
          dismissAnnouncement();
          setDismissed(true);
        }}
      >
        <CloseIcon size={16} />
      </button>
    </section>
  );
}

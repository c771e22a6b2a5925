// The page for any path that is not one of the site's routes.
import { siteUrl } from "../routing/site-url.js";

export function NotFoundPage() {
  return (
    <div className="not-found">
      <h1>Page Not Found</h1>
      <p>There is no page at this address. It may have moved, or the link may have a typo.</p>
      <ul>
        <li>
          <a href={siteUrl("")}>Documentation home</a>
        </li>
        <li>
          <a href={siteUrl("get-started/what-is-ai-engine-manager")}>What is AI Engine Manager?</a>
        </li>
        <li>
          <a href={siteUrl("api/")}>API reference</a>
        </li>
      </ul>
      <p>You can also search the documentation with Ctrl+K (⌘K on a Mac) or /.</p>
    </div>
  );
}

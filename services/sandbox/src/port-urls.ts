// Where a port is reached. Derived, never stored, so it follows the configured public URL.
import type { ContentUrls } from "@aiem/kit/config";

export interface PortUrls {
  /** Reached with the sandbox creator's token. */
  internal(sandboxUid: string, port: number): string;
  /** Reached by anyone, while the port is public. */
  public(sandboxUid: string, port: number): string;
}

/** Each port at an origin of its own (`{port}-{uid}.sandboxes.<base>`), or a path with AIEM_PATH_URLS. */
export function createPortUrls(content: ContentUrls): PortUrls {
  return { internal: content.port, public: content.publicPort };
}

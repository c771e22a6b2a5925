// The site's base path and the URLs under it. Apart from the route table on purpose: navigation
// and the page chrome need these, and the route table loads pages that need navigation.
export const base: string = import.meta.env.BASE_URL;

/** The path relative to the base, or undefined when the URL is outside the site. */
export function relativePath(pathname: string): string | undefined {
  if (pathname === base.slice(0, -1)) return "";
  return pathname.startsWith(base) ? decodeURI(pathname.slice(base.length)) : undefined;
}

export function siteUrl(path: string): string {
  return base + path;
}

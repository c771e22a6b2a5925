// The order of DAI and H2O versions: by version number, as the real service lists them (newest
// first). A version id becomes a text key whose byte order ("C" collation) is that numeric order,
// so lists sort and page on an indexed column.

/**
 * The sort key of a version id (`1.11.4.1`, `12`, `1.10.3-alpha`): each numeric segment as its
 * digit count (two digits) and its digits, so `9` < `10`; segments joined by `.`; then `#` for a
 * release, or `!` and the pre-release text. `!` < `#` < `.` in byte order, so `1.10.3-alpha` <
 * `1.10.3` < `1.10.3.1` < `1.10.4`. Ids differ exactly when their keys do.
 */
export function versionSortKey(id: string): string {
  const dash = id.indexOf("-");
  const release = dash === -1 ? id : id.slice(0, dash);
  const numbers = release
    .split(".")
    .map((segment) => `${String(segment.length).padStart(2, "0")}${segment}`)
    .join(".");
  return dash === -1 ? `${numbers}#` : `${numbers}!${id.slice(dash + 1)}`;
}

/** The id of a version name (`workspaces/w/daiEngineVersions/1.11.4` gives `1.11.4`). */
export function versionIdOf(name: string): string {
  return name.slice(name.lastIndexOf("/") + 1);
}

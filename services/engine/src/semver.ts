// Ordering of DAI and H2O version ids: one or more numeric segments and an optional
// pre-release (`12`, `1.10.3`, `1.10.3.1`, `1.10.3-alpha`), compared as semantic versions with as many
// numeric segments as they have (a missing segment counts as 0).

interface Parsed {
  readonly numbers: bigint[];
  readonly pre: string[];
}

function parse(id: string): Parsed | undefined {
  const m = /^([0-9]+(?:\.[0-9]+)*)(?:-([0-9A-Za-z.-]+))?$/.exec(id);
  if (!m) return undefined;
  return { numbers: m[1]!.split(".").map((n) => BigInt(n)), pre: m[2] ? m[2].split(".") : [] };
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b`. Unparsable ids sort by text. */
export function compareVersions(a: string, b: string): number {
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0;
  const n = Math.max(pa.numbers.length, pb.numbers.length);
  for (let i = 0; i < n; i++) {
    const x = pa.numbers[i] ?? 0n;
    const y = pb.numbers[i] ?? 0n;
    if (x !== y) return x < y ? -1 : 1;
  }
  // A release is newer than its pre-releases.
  if (pa.pre.length === 0 || pb.pre.length === 0)
    return pb.pre.length - pa.pre.length === 0 ? 0 : pa.pre.length === 0 ? 1 : -1;
  const m = Math.max(pa.pre.length, pb.pre.length);
  for (let i = 0; i < m; i++) {
    const x = pa.pre[i];
    const y = pb.pre[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const xn = /^[0-9]+$/.test(x);
    const yn = /^[0-9]+$/.test(y);
    if (xn && yn) {
      const d = BigInt(x) - BigInt(y);
      if (d !== 0n) return d < 0n ? -1 : 1;
    } else if (xn !== yn) {
      return xn ? -1 : 1;
    } else if (x !== y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

/** The last segment of a resource name. */
export function idOf(name: string): string {
  return name.slice(name.lastIndexOf("/") + 1);
}

/** The workspace part of a resource name (`workspaces/global`). */
export function workspaceNameOf(name: string): string {
  const i = name.indexOf("/", "workspaces/".length);
  return i < 0 ? name : name.slice(0, i);
}

// The maps the catalogue read model keeps: each wanted kind's resources by name, and the versions'
// aliases by workspace, so a name whose last segment is an alias resolves to its version.
import type { CatalogueKind } from "../authz/index.js";
import type { CatalogueResource, CatalogueResourceByKind } from "./resources.js";

export interface CatalogueStore {
  /** Stores `resource` under `name`, or removes it when undefined; false for a kind not kept. */
  apply(kind: CatalogueKind, name: string, resource: CatalogueResource | undefined): boolean;
  get<K extends CatalogueKind>(kind: K, name: string): CatalogueResourceByKind[K] | undefined;
  resolveName(kind: CatalogueKind, name: string): string | undefined;
  list<K extends CatalogueKind>(kind: K, workspace?: string): CatalogueResourceByKind[K][];
}

export function createCatalogueStore(wanted: ReadonlySet<CatalogueKind>): CatalogueStore {
  const resources = new Map<CatalogueKind, Map<string, CatalogueResource>>([...wanted].map((k) => [k, new Map()]));
  // `<kind>` -> `workspaces/w/alias` -> version name
  const aliases = new Map<CatalogueKind, Map<string, string>>();

  const workspaceOfName = (name: string) => name.slice(0, name.indexOf("/", "workspaces/".length));
  const aliasKey = (versionName: string, alias: string) => `${workspaceOfName(versionName)}/${alias}`;

  function unindexAliases(kind: CatalogueKind, previous: CatalogueResource | undefined): void {
    const old = (previous as { aliases?: string[] } | undefined)?.aliases;
    if (!previous || !old) return;
    const index = aliases.get(kind);
    for (const alias of old) {
      const key = aliasKey(previous.name, alias);
      if (index?.get(key) === previous.name) index.delete(key);
    }
  }

  function apply(kind: CatalogueKind, name: string, resource: CatalogueResource | undefined): boolean {
    const map = resources.get(kind);
    if (!map) return false;
    const previous = map.get(name);
    unindexAliases(kind, previous);
    if (resource) {
      map.set(name, resource);
      const own = (resource as { aliases?: string[] }).aliases;
      if (own?.length) {
        let index = aliases.get(kind);
        if (!index) {
          index = new Map();
          aliases.set(kind, index);
        }
        for (const alias of own) index.set(aliasKey(name, alias), name);
      }
    } else {
      map.delete(name);
    }
    return true;
  }

  function resolveName(kind: CatalogueKind, name: string): string | undefined {
    const map = resources.get(kind);
    if (!map) return undefined;
    if (map.has(name)) return name;
    const slash = name.lastIndexOf("/");
    if (slash < 0) return undefined;
    const target = aliases.get(kind)?.get(`${workspaceOfName(name)}/${name.slice(slash + 1)}`);
    return target !== undefined && map.has(target) ? target : undefined;
  }

  return {
    apply,
    resolveName,
    get<K extends CatalogueKind>(kind: K, name: string) {
      const canonical = resolveName(kind, name);
      return canonical === undefined ? undefined : (resources.get(kind)!.get(canonical) as CatalogueResourceByKind[K]);
    },
    list<K extends CatalogueKind>(kind: K, workspace?: string) {
      const prefix =
        workspace === undefined
          ? undefined
          : `${workspace.startsWith("workspaces/") ? workspace : `workspaces/${workspace}`}/`;
      return [...(resources.get(kind)?.values() ?? [])]
        .filter((r) => prefix === undefined || r.name.startsWith(prefix))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) as CatalogueResourceByKind[K][];
    },
  };
}

// The Kubernetes API calls our runtimes make, read from their source, and the grants of a Role's
// rules, both as `group/resource verb` strings, so that each runtime's Role in base/ can be
// checked to hold exactly what that runtime calls. Reading the source rather than recording calls
// at run time covers every branch, including the ones a test never takes.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

export interface ApiCall {
  /** `group/resource verb`, the core group as "" (e.g. `/pods create`, `/pods/log get`). */
  readonly grant: string;
  /** Where it was found, `file: method`, for messages. */
  readonly where: string;
}

export interface RoleRule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly verbs?: readonly string[];
}

/** The API group of each kind a typed client method may name. */
const groupOfKind: Record<string, string> = {
  Pod: "",
  Service: "",
  PersistentVolumeClaim: "",
  Event: "",
  ConfigMap: "",
  Secret: "",
  Endpoints: "",
  ServiceAccount: "",
  Deployment: "apps",
  StatefulSet: "apps",
  ReplicaSet: "apps",
  Job: "batch",
  Lease: "coordination.k8s.io",
  Ingress: "networking.k8s.io",
  NetworkPolicy: "networking.k8s.io",
  PodDisruptionBudget: "policy",
  EndpointSlice: "discovery.k8s.io",
};

/** Client classes whose `...NamespacedEvent` methods are not the core group's. */
const groupOfClientClass: Record<string, string> = { EventsV1Api: "events.k8s.io" };

const verbOfAction: Record<string, string> = {
  create: "create",
  read: "get",
  list: "list",
  patch: "patch",
  replace: "update",
  delete: "delete",
  deleteCollection: "deletecollection",
  connectGet: "get",
  connectPost: "create",
};

const subresources: Record<string, string> = {
  Log: "log",
  Status: "status",
  Scale: "scale",
  Eviction: "eviction",
  Binding: "binding",
  Ephemeralcontainers: "ephemeralcontainers",
  Exec: "exec",
  Attach: "attach",
  Portforward: "portforward",
  Proxy: "proxy",
};

function plural(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower === "endpoints") return lower;
  if (lower.endsWith("s")) return `${lower}es`;
  if (lower.endsWith("y")) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}

/** Splits `PodLog` into the kind and the subresource, the longest known kind first. */
function kindAndSubresource(name: string): { kind: string; subresource?: string } | undefined {
  if (name === "CustomObject") return { kind: name };
  for (const kind of Object.keys(groupOfKind).sort((a, b) => b.length - a.length)) {
    if (name === kind) return { kind };
    const rest = name.slice(kind.length);
    if (name.startsWith(kind) && subresources[rest]) return { kind, subresource: subresources[rest] };
  }
  return undefined;
}

/** A string constant's value: a literal, or an identifier declared `const x = "..."` in the file. */
function constantValue(expression: string, source: string): string | undefined {
  const literal = /^["'`]([^"'`$]*)["'`]$/.exec(expression.trim());
  if (literal) return literal[1];
  const declared = new RegExp(`const\\s+${expression.trim()}\\s*=\\s*["'\`]([^"'\`$]*)["'\`]`).exec(source);
  return declared?.[1];
}

/**
 * The calls one source file makes: typed client methods (`core.createNamespacedPod(...)`,
 * `custom.listNamespacedCustomObject({ group, plural, ... })`), informers and watches on a
 * namespaced path (`makeInformer(config, "/api/v1/namespaces/${ns}/pods", ...)`: list and watch).
 * What cannot be told from the text (a cluster-scoped call, which a Role cannot grant; the generic
 * object API; a group or plural that is not a constant) is an error naming it.
 */
export function apiCallsOf(file: string, source: string): { calls: ApiCall[]; errors: string[] } {
  const calls: ApiCall[] = [];
  const errors: string[] = [];
  const clientClasses = new Map<string, string>();
  for (const match of source.matchAll(/(\w+)\s*=\s*[\w.]+\.makeApiClient\((\w+)\)/g)) {
    clientClasses.set(match[1] ?? "", match[2] ?? "");
  }

  const method =
    /(?:(\w+)\s*\.\s*)?\b(create|read|list|patch|replace|deleteCollection|delete|connectGet|connectPost)Namespaced([A-Z]\w*)\s*\(/g;
  for (const match of source.matchAll(method)) {
    const [, receiver = "", action = "", name = ""] = match;
    const where = `${file}: ${action}Namespaced${name}`;
    const verb = verbOfAction[action] ?? "";
    const parsed = kindAndSubresource(name);
    if (!parsed) {
      errors.push(`${where}: unknown kind ${name}; add it to groupOfKind in deploy/kubernetes/runtime-api-calls.ts`);
      continue;
    }
    if (parsed.kind === "CustomObject") {
      const args = source.slice((match.index ?? 0) + match[0].length, source.indexOf(")", match.index));
      const group = /\bgroup\s*:\s*([^,}\n]+)/.exec(args)?.[1];
      const resource = /\bplural\s*:\s*([^,}\n]+)/.exec(args)?.[1];
      const groupValue = group === undefined ? undefined : constantValue(group, source);
      const pluralValue = resource === undefined ? undefined : constantValue(resource, source);
      if (groupValue === undefined || pluralValue === undefined) {
        errors.push(`${where}: its group and plural must be string constants to be checked`);
        continue;
      }
      calls.push({ grant: `${groupValue}/${pluralValue} ${verb}`, where });
      continue;
    }
    const group = groupOfClientClass[clientClasses.get(receiver) ?? ""] ?? groupOfKind[parsed.kind] ?? "";
    const resource = plural(parsed.kind) + (parsed.subresource ? `/${parsed.subresource}` : "");
    calls.push({ grant: `${group}/${resource} ${verb}`, where });
  }

  const watched =
    /\b(makeInformer(?:<[^>]*>)?\(\s*[\w.]+\s*,|\.watch\()\s*["'`]\/(?:api\/v1|apis\/([\w.-]+)\/\w+)\/namespaces\/[^/]+\/([a-z]+)["'`]/g;
  for (const match of source.matchAll(watched)) {
    const [, how = "", group = "", resource = ""] = match;
    const where = `${file}: ${how.startsWith("makeInformer") ? "informer" : "watch"} on ${resource}`;
    if (how.startsWith("makeInformer")) calls.push({ grant: `${group}/${resource} list`, where });
    calls.push({ grant: `${group}/${resource} watch`, where });
  }

  // The kit's `coreInformer(config, core, namespace, "pods", ...)`: an informer on a core resource.
  for (const match of source.matchAll(
    /\bcoreInformer\(\s*[\w.]+\s*,\s*[\w.]+\s*,\s*[\w.]+\s*,\s*["'`]([a-z]+)["'`]/g,
  )) {
    const resource = match[1] ?? "";
    const where = `${file}: informer on ${resource}`;
    calls.push({ grant: `/${resource} list`, where }, { grant: `/${resource} watch`, where });
  }

  // coreInformer's own makeInformer names its resource by a parameter, and its table lists every
  // resource it could inform on: the calls are its callers', read above where they are made.
  const generic = /\bexport function coreInformer\b/.test(source) ? 1 : 0;
  if (generic) {
    const own = calls.filter((c) => !/: listNamespaced\w+$/.test(c.where));
    calls.splice(0, calls.length, ...own);
  }
  const informers = (source.match(/\bmakeInformer(?:<[^>]*>)?\(/g)?.length ?? 0) - generic;
  const readInformers = calls.filter((c) => c.where.includes(": informer on ")).length / 2;
  if (informers > readInformers) {
    errors.push(`${file}: an informer's path is not a literal namespaced path, so its resource cannot be checked`);
  }
  for (const match of source.matchAll(/\b\w+ForAllNamespaces\b|\bKubernetesObjectApi\b/g)) {
    errors.push(`${file}: ${match[0]} cannot be granted by a namespaced Role or checked from the source`);
  }
  for (const match of source.matchAll(
    /\.(create|read|list|patch|replace|delete)(Node|Namespace|PersistentVolume|StorageClass|ClusterRole\w*|CustomResourceDefinition)\s*\(/g,
  )) {
    errors.push(`${file}: ${match[1]}${match[2]} is cluster-scoped; a namespaced Role cannot grant it`);
  }
  return { calls, errors };
}

/** Every non-test TypeScript file under `dir` that imports the Kubernetes client. */
export function kubernetesClientFiles(dir: string): string[] {
  const files: string[] = [];
  const visit = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "testing") visit(path);
      } else if (
        entry.name.endsWith(".ts") &&
        !entry.name.endsWith(".test.ts") &&
        readFileSync(path, "utf8").includes('"@kubernetes/client-node"')
      ) {
        files.push(path);
      }
    }
  };
  visit(dir);
  return files.sort();
}

/**
 * The calls of every runtime file under the sources of `services` (every service of `root` by
 * default); the kit's count for every service, whose runtime may call through it.
 */
export function runtimeApiCalls(
  root: string,
  services?: readonly string[],
): { calls: ApiCall[]; errors: string[]; files: string[] } {
  const servicesDir = join(root, "services");
  const names = services ? [...new Set([...services, "kit"])] : readdirSync(servicesDir);
  const files = names.flatMap((name) => kubernetesClientFiles(join(servicesDir, name, "src")));
  const calls: ApiCall[] = [];
  const errors: string[] = [];
  for (const file of files) {
    const found = apiCallsOf(relative(root, file), readFileSync(file, "utf8"));
    calls.push(...found.calls);
    errors.push(...found.errors);
  }
  return { calls, errors, files: files.map((f) => relative(root, f)) };
}

/** What a Role's rules grant, one `group/resource verb` each, sorted. */
export function grantsOf(rules: readonly RoleRule[]): string[] {
  const grants = new Set<string>();
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const verb of rule.verbs ?? []) grants.add(`${group}/${resource} ${verb}`);
      }
    }
  }
  return [...grants].sort();
}

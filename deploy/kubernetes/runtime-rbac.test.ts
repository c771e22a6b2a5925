// Each runtime's Role holds exactly the calls its service's source makes: nothing missing (an
// engine or a sandbox would fail with 403 in a real cluster) and nothing more.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { apiCallsOf, grantsOf, type RoleRule, runtimeApiCalls } from "./runtime-api-calls.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "../..");

function roleRules(file: string): RoleRule[] {
  const documents = parseAllDocuments(readFileSync(join(here, "base", file), "utf8"));
  const role = documents.map((d) => d.toJS()).find((o) => o?.kind === "Role");
  return role.rules;
}

const runtimes = [
  {
    service: "engine",
    file: "runtime-rbac.yaml",
    source: "services/engine/src/runtime/kubernetes/kubernetes-runtime.ts",
  },
  {
    service: "sandbox",
    file: "sandbox-runtime-rbac.yaml",
    source: "services/sandbox/src/kubernetes/kubernetes-sandbox-runtime.ts",
  },
] as const;

describe.each(runtimes)("the $service runtime's Role", ({ service, file, source }) => {
  it("grants every call the runtime makes, and nothing else", () => {
    const { calls, errors, files } = runtimeApiCalls(root, [service]);
    expect(errors).toEqual([]);
    expect(files).toContain(source);
    expect(files.every((f) => f.startsWith(`services/${service}/`) || f.startsWith("services/kit/"))).toBe(true);
    const granted = grantsOf(roleRules(file));
    const missing = calls.filter((c) => !granted.includes(c.grant)).map((c) => `${c.grant} (${c.where})`);
    expect(missing, `calls the Role in deploy/kubernetes/base/${file} does not grant`).toEqual([]);
    const needed = new Set(calls.map((c) => c.grant));
    expect(
      granted.filter((g) => !needed.has(g)),
      "grants no runtime call needs",
    ).toEqual([]);
  });
});

describe("reading the calls from the source", () => {
  it("reads typed methods, subresources, informers, watches and custom objects", () => {
    const source = [
      "const core = config.makeApiClient(CoreV1Api);",
      "const events = config.makeApiClient(EventsV1Api);",
      "const custom = config.makeApiClient(CustomObjectsApi);",
      'const gateway = "gateway.networking.k8s.io";',
      "await core.createNamespacedPod({ namespace, body });",
      "await core.readNamespacedPodLog({ namespace, name });",
      "await core.replaceNamespacedPersistentVolumeClaim({ namespace, name, body });",
      "await core.deleteCollectionNamespacedService({ namespace });",
      "await core.connectPostNamespacedPodExec({ namespace, name });",
      "await events.listNamespacedEvent({ namespace });",
      "await core.listNamespacedEvent({ namespace });",
      'await custom.createNamespacedCustomObject({ group: gateway, version: "v1", namespace, plural: "httproutes", body });',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
      "makeInformer<V1Pod>(config, `/api/v1/namespaces/${namespace}/pods`, list);",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
      "await watch.watch(`/apis/apps/v1/namespaces/${namespace}/statefulsets`, {}, onEvent, onDone);",
      'const claims = coreInformer(config, core, namespace, "persistentvolumeclaims", selector);',
    ].join("\n");
    const { calls, errors } = apiCallsOf("x.ts", source);
    expect(errors).toEqual([]);
    expect(calls.map((c) => c.grant)).toEqual([
      "/pods create",
      "/pods/log get",
      "/persistentvolumeclaims update",
      "/services deletecollection",
      "/pods/exec create",
      "events.k8s.io/events list",
      "/events list",
      "gateway.networking.k8s.io/httproutes create",
      "/pods list",
      "/pods watch",
      "apps/statefulsets watch",
      "/persistentvolumeclaims list",
      "/persistentvolumeclaims watch",
    ]);
  });

  it("refuses what a namespaced Role cannot grant or the source cannot tell", () => {
    const source = [
      "await core.listNode();",
      "await core.listPodForAllNamespaces();",
      "await core.createNamespacedWidget({ namespace });",
      "await custom.listNamespacedCustomObject({ group, version, namespace, plural });",
      "makeInformer(config, path, list);",
    ].join("\n");
    const { errors } = apiCallsOf("x.ts", source);
    expect(errors).toHaveLength(5);
    expect(errors.join("\n")).toMatch(/unknown kind Widget/);
    expect(errors.join("\n")).toMatch(/string constants/);
    expect(errors.join("\n")).toMatch(/ForAllNamespaces/);
    expect(errors.join("\n")).toMatch(/listNode is cluster-scoped/);
    expect(errors.join("\n")).toMatch(/informer's path is not a literal/);
  });
});

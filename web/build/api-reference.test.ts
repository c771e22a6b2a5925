import { getOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { http } from "@aiem/proto/google/api/annotations_pb.js";
import { commentHtml } from "./api-comment-html.js";
import { apiPackages, buildApiReference } from "./api-reference.js";
import { createSampler } from "./api-samples.js";
import { loadDescriptorRegistry } from "./proto-descriptors.js";

const registry = loadDescriptorRegistry();
const api = buildApiReference(registry, { introHtml: "<p>intro</p>", introToc: [], route: "api/" });
const documented = [...registry.files].filter((f) => apiPackages.some((p) => p.name === f.proto.package));
const services = documented.flatMap((f) => f.services);

describe("the API reference", () => {
  it("documents the public packages and leaves the internal APIs out", () => {
    expect(services.length).toBeGreaterThan(15);
    expect(api.html).not.toContain("enginemanager.agent.v1");
    expect(api.html).not.toContain("enginemanager.internal.v1");
  });

  it("has an anchor, a heading and every HTTP binding for each service and method", () => {
    for (const service of services) {
      expect(api.ids.has(service.typeName)).toBe(true);
      for (const method of service.methods) {
        const id = `${service.typeName}.${method.name}`;
        expect(api.html).toContain(`<h3 id="${id}">`);
        const rule = getOption(method, http);
        const section = api.html.slice(
          api.html.indexOf(`<h3 id="${id}">`),
          api.html.indexOf(`id="${method.input.typeName}"`),
        );
        if (rule.pattern.case === undefined) {
          // The file streams: a client stream cannot be a REST call (their REST peers are :upload and :download).
          expect(section, id).toContain("Connect and gRPC only.");
          expect(section, id).not.toContain('class="http-path"');
        } else {
          const path = rule.pattern.case === "custom" ? rule.pattern.value.path : (rule.pattern.value as string);
          expect(section).toContain(`<code class="http-path">${path.replace(/&/g, "&amp;")}</code>`);
        }
        expect(api.toc).toContainEqual({ id, text: method.name, level: 3 });
      }
    }
  });

  it("shows field tables with behaviour badges, JSON names and links to types", () => {
    const row = (id: string) => {
      const start = api.html.indexOf(`<tr id="${id}">`);
      expect(start, id).toBeGreaterThan(0);
      return api.html.slice(start, api.html.indexOf("</tr>", start));
    };
    expect(row("enginemanager.v1.DAIEngine.profile")).toContain('<span class="badge badge-required">Required</span>');
    expect(row("enginemanager.v1.DAIEngine.state")).toContain(
      '<span class="badge badge-output-only">Output only</span>',
    );
    expect(row("enginemanager.v1.NotebookEngine.notebook_image")).toContain(
      '<span class="badge badge-immutable">Immutable</span>',
    );
    expect(row("enginemanager.v1.DAIEngine.memory_bytes")).toContain('<code class="field-json">memoryBytes</code>');
    expect(row("enginemanager.v1.DAIEngine.memory_bytes")).toContain("(string in JSON)");
    expect(row("enginemanager.v1.DAIEngine.create_time")).toContain('href="#google.protobuf.Timestamp"');
    expect(row("enginemanager.v1.DAIEngine.profile")).toContain('href="#enginemanager.v1.DAIEngineProfile"');
  });

  it("lists enums with their values and numbers, and marks deprecated values", () => {
    expect(api.ids.has("enginemanager.v1.DAIEngine.State")).toBe(true);
    expect(api.html).toMatch(
      /<tr id="enginemanager\.v1\.H2OEngine\.State\.STATE_PAUSED"><td><code>STATE_PAUSED<\/code>.*?<td>4<\/td><td> <span class="badge badge-deprecated">Deprecated<\/span>/,
    );
    expect(api.ids.has("enginemanager.v1.ImagePullPolicy.IMAGE_PULL_POLICY_IF_NOT_PRESENT")).toBe(true);
  });

  it("documents the well-known types the fields use", () => {
    for (const name of [
      "google.protobuf.Timestamp",
      "google.protobuf.Duration",
      "google.protobuf.FieldMask",
      "google.rpc.Status",
    ]) {
      expect(api.ids.has(name), name).toBe(true);
    }
  });

  it("only links to anchors that exist", () => {
    const targets = [...api.html.matchAll(/href="#([^"]+)"/g)].map((m) => m[1]!);
    const ids = new Set([...api.html.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]!));
    expect(targets.filter((t) => !ids.has(t))).toEqual([]);
  });

  it("gives every method a search entry and a Try it button with an example request", () => {
    const methodCount = services.reduce((n, s) => n + s.methods.length, 0);
    expect(
      api.searchDocs.filter(
        (d) => /\.[A-Z]\w+$/.test(d.id) && d.page.startsWith("API reference · ") && !d.page.includes("enginemanager"),
      ).length,
    ).toBeGreaterThanOrEqual(methodCount);
    // Try it sends one request: every method but the client stream (WriteFileStream).
    const clientStreams = services.flatMap((s) => s.methods).filter((m) => m.methodKind === "client_streaming");
    expect(clientStreams.map((m) => m.name)).toEqual(["WriteFileStream"]);
    expect(api.html.match(/data-try="/g)!.length).toBe(methodCount - clientStreams.length);
    expect(api.serviceModules).toContain("@aiem/proto/enginemanager/v1/dai_engine_service_pb.js");
  });
});

describe("example requests", () => {
  const sample = createSampler(registry);
  const method = (service: string, name: string) =>
    services.find((s) => s.typeName === service)!.methods.find((m) => m.name === name)!;

  it("fill required fields with names of the right shape", () => {
    const create = sample(method("enginemanager.v1.DAIEngineService", "CreateDAIEngine"));
    expect(create.connectJson).toEqual({
      parent: "workspaces/default",
      daiEngine: {
        profile: "workspaces/global/daiEngineProfiles/default",
        daiEngineVersion: "workspaces/global/daiEngineVersions/latest",
      },
      daiEngineId: "my-dai-engine",
    });
    expect(create.curl).toContain(
      'curl -X POST "$AIEM_URL/v1/workspaces/default/daiEngines?daiEngineId=my-dai-engine"',
    );
  });

  it("name the resource and mask one field for updates, snake_case in the REST query", () => {
    const update = sample(method("enginemanager.v1.NotebookEngineService", "UpdateNotebookEngine"));
    expect(update.connectJson).toMatchObject({
      updateMask: "displayName",
      notebookEngine: { name: "workspaces/default/notebookEngines/my-notebook-engine", displayName: "Renamed" },
    });
    expect(update.curl).toContain(
      'curl -X PATCH "$AIEM_URL/v1/workspaces/default/notebookEngines/my-notebook-engine?updateMask=display_name"',
    );
  });

  it("put GET fields in the path", () => {
    const get = sample(method("enginemanager.sandbox.v1.ProcessService", "GetProcess"));
    expect(get.curl).toBe(
      'curl "$AIEM_URL/v1/workspaces/default/sandboxEngines/my-sandbox-engine/processes/my-process" \\\n  -H "Authorization: Bearer $TOKEN"',
    );
  });
});

describe("comments", () => {
  it("render Markdown, escape angle brackets outside code and link names of documented items", () => {
    const html = commentHtml(
      "Uses `Foo` and `users/<id>` for <workspace>.\n\n- one\n- two",
      new Map([["Foo", "pkg.Foo"]]),
    );
    expect(html).toContain('<a href="#pkg.Foo"><code>Foo</code></a>');
    expect(html).toContain("<code>users/&lt;id&gt;</code>");
    expect(html).toContain("&lt;workspace&gt;");
    expect(html).toContain("<li>one</li>");
  });
});

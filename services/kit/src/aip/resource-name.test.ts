import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createResourcePattern,
  daiEnginePattern,
  daiEngineVersionPattern,
  h2oEngineVersionPattern,
  portPattern,
  processPattern,
  resourcePatterns,
  sandboxEnginePattern,
  secretVersionPattern,
  workspaceOf,
  workspacePattern,
} from "./resource-name.js";
import { invalidArgumentMessage } from "./test-support.js";

const invalid = invalidArgumentMessage;

const samples: Record<keyof typeof resourcePatterns, string> = {
  workspace: "workspaces/team-a",
  daiEngine: "workspaces/team-a/daiEngines/my-engine",
  h2oEngine: "workspaces/team-a/h2oEngines/h1",
  notebookEngine: "workspaces/team-a/notebookEngines/nb",
  sandboxEngine: "workspaces/team-a/sandboxEngines/sb",
  daiEngineProfile: "workspaces/global/daiEngineProfiles/default",
  h2oEngineProfile: "workspaces/global/h2oEngineProfiles/default",
  notebookEngineProfile: "workspaces/global/notebookEngineProfiles/default",
  daiEngineVersion: "workspaces/global/daiEngineVersions/1.11.0",
  h2oEngineVersion: "workspaces/global/h2oEngineVersions/3.46.0.1",
  notebookEngineImage: "workspaces/global/notebookEngineImages/jupyter",
  sandboxEngineImage: "workspaces/global/sandboxEngineImages/python",
  sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/small",
  port: "workspaces/team-a/sandboxEngines/sb/ports/8080",
  process: "workspaces/team-a/sandboxEngines/sb/processes/1abc",
  secret: "workspaces/team-a/secrets/db-password",
  secretVersion: "workspaces/team-a/secrets/db-password/versions/latest",
};

describe("resource names", () => {
  it.each(Object.entries(samples))("%s: parse then format gives the name back", (kind, name) => {
    const pattern = resourcePatterns[kind as keyof typeof resourcePatterns];
    const parts = pattern.parse(name);
    expect(pattern.format(parts as never)).toBe(name);
    expect(pattern.matches(name)).toBe(true);
    // No pattern accepts another kind's name.
    for (const [otherKind, other] of Object.entries(samples)) {
      if (otherKind !== kind) expect(pattern.matches(other), `${kind} vs ${otherKind}`).toBe(false);
    }
  });

  it("parses into named parts", () => {
    expect(daiEnginePattern.parse("workspaces/team-a/daiEngines/my-engine")).toEqual({
      workspace: "team-a",
      dai_engine: "my-engine",
    });
    expect(portPattern.parse("workspaces/w/sandboxEngines/s/ports/65535")).toEqual({
      workspace: "w",
      sandbox_engine: "s",
      port: "65535",
    });
    expectTypeOf(daiEnginePattern.parse).returns.toEqualTypeOf<{
      readonly workspace: string;
      readonly dai_engine: string;
    }>();
    expect(daiEnginePattern.collection).toBe("daiEngines");
    expect(daiEnginePattern.variables).toEqual(["workspace", "dai_engine"]);
  });

  it("rejects names of the wrong shape, naming the field", () => {
    expect(invalid(() => daiEnginePattern.parse(""))).toBe("name: is required");
    expect(invalid(() => daiEnginePattern.parse("workspaces/a/h2oEngines/x"))).toBe(
      'name: "workspaces/a/h2oEngines/x" is not a name of the form workspaces/{workspace}/daiEngines/{dai_engine}',
    );
    for (const bad of [
      "workspaces/a/daiEngines",
      "workspaces/a/daiEngines/x/y",
      "/workspaces/a/daiEngines/x",
      "workspaces/a/daiEngines/x/",
      "workspaces//daiEngines/x",
      "Workspaces/a/daiEngines/x",
    ]) {
      expect(daiEnginePattern.tryParse(bad), bad).toBeUndefined();
    }
    expect(invalid(() => daiEnginePattern.parse("x", "dai_engine.name"))).toMatch(/^dai_engine\.name: /);
  });

  it("checks every id against its rule", () => {
    expect(invalid(() => daiEnginePattern.parse("workspaces/a/daiEngines/My_Engine"))).toBe(
      'name: the {dai_engine} segment of "workspaces/a/daiEngines/My_Engine" must be 1-63 characters of lowercase letters, digits and hyphens, starting with a letter and ending with a letter or digit',
    );
    expect(daiEnginePattern.matches(`workspaces/a/daiEngines/${"a".repeat(64)}`)).toBe(false);
    expect(daiEnginePattern.matches("workspaces/A/daiEngines/x")).toBe(false);
    expect(processPattern.matches("workspaces/a/sandboxEngines/s/processes/9")).toBe(true);
    expect(sandboxEnginePattern.matches("workspaces/a/sandboxEngines/9")).toBe(false);
    expect(portPattern.matches("workspaces/a/sandboxEngines/s/ports/80")).toBe(false);
    expect(portPattern.matches("workspaces/a/sandboxEngines/s/ports/65536")).toBe(false);
    expect(daiEngineVersionPattern.matches("workspaces/global/daiEngineVersions/latest")).toBe(true);
    expect(daiEngineVersionPattern.matches("workspaces/global/daiEngineVersions/1.10.3-alpha")).toBe(true);
    expect(h2oEngineVersionPattern.matches("workspaces/global/h2oEngineVersions/1.10")).toBe(true);
    expect(h2oEngineVersionPattern.matches("workspaces/global/h2oEngineVersions/1..10")).toBe(false);
    expect(secretVersionPattern.matches("workspaces/a/secrets/s/versions/3")).toBe(true);
    expect(secretVersionPattern.matches("workspaces/a/secrets/s/versions/0")).toBe(false);
  });

  it("takes workspace ids that start with a digit (UUIDs) in every pattern, other ids not", () => {
    const uuid = "8cf6b17d-c018-48f0-8d05-cdd5fba22893";
    expect(workspacePattern.parse(`workspaces/${uuid}`)).toEqual({ workspace: uuid });
    expect(sandboxEnginePattern.parse(`workspaces/${uuid}/sandboxEngines/s`)).toEqual({
      workspace: uuid,
      sandbox_engine: "s",
    });
    expect(portPattern.matches(`workspaces/${uuid}/sandboxEngines/s/ports/8080`)).toBe(true);
    expect(daiEnginePattern.matches(`workspaces/${uuid}/daiEngines/e`)).toBe(true);
    expect(daiEnginePattern.matches(`workspaces/${uuid}/daiEngines/9e`)).toBe(false);
    for (const bad of ["-a", "a-", "A1", "1_2", "1".repeat(64)]) {
      expect(workspacePattern.matches(`workspaces/${bad}`), bad).toBe(false);
    }
    expect(invalid(() => workspacePattern.parse("workspaces/9-", "parent"))).toBe(
      'parent: the {workspace} segment of "workspaces/9-" must be 1-63 characters of lowercase letters, digits and hyphens, starting and ending with a letter or digit',
    );
  });

  it("accepts - only where allowed", () => {
    expect(workspacePattern.matches("workspaces/-")).toBe(false);
    expect(workspacePattern.parse("workspaces/-", "parent", { allowWildcard: ["workspace"] })).toEqual({
      workspace: "-",
    });
    expect(daiEnginePattern.matches("workspaces/-/daiEngines/-", { allowWildcard: ["workspace"] })).toBe(false);
  });

  it("format refuses values that would change the name's shape", () => {
    expect(() => daiEnginePattern.format({ workspace: "a/b", dai_engine: "x" })).toThrow();
    expect(() => daiEnginePattern.format({ workspace: "", dai_engine: "x" })).toThrow();
  });

  it("custom patterns validate their variables and reject bad pattern text", () => {
    const p = createResourcePattern("users/{user}", { user: (v) => (v.length > 3 ? undefined : "must be long") });
    expect(p.parse("users/alice")).toEqual({ user: "alice" });
    expect(p.matches("users/al")).toBe(false);
    expect(() => createResourcePattern("a b/{x}")).toThrow();
  });

  it("workspaceOf reads the workspace of any name", () => {
    expect(workspaceOf("workspaces/team-a/daiEngines/x")).toBe("team-a");
    expect(workspaceOf("workspaces/team-a")).toBe("team-a");
    expect(workspaceOf("users/x")).toBeUndefined();
  });
});

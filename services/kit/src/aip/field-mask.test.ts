import { describe, expect, it } from "vitest";
import { checkUpdateMask, maskPathToCamelCase } from "./field-mask.js";
import { invalidArgumentMessage } from "./test-support.js";

const rules = {
  allowed: ["profile", "cpu", "gpu", "display_name", "max_idle_duration"],
  immutable: ["dai_engine_version", "uid"],
};

function message(paths: string[] | undefined): string {
  return invalidArgumentMessage(() => checkUpdateMask(paths, rules));
}

describe("update masks", () => {
  it("returns the listed paths, deduplicated, in request order", () => {
    expect(checkUpdateMask(["cpu", "display_name", "cpu"], rules)).toEqual(["cpu", "display_name"]);
  });

  it("expands * to every allowed path", () => {
    expect(checkUpdateMask(["*"], rules)).toEqual(rules.allowed);
  });

  it("requires a non-empty mask", () => {
    expect(message(undefined)).toMatch(/^update_mask: is required/);
    expect(message([])).toMatch(/^update_mask: is required/);
  });

  it("rejects empty, unknown, immutable and mixed-* paths, naming them", () => {
    expect(message(["cpu", ""])).toBe("update_mask: path 2 is empty");
    expect(message(["cpu", "nope"])).toMatch(/^update_mask: unknown path "nope"; allowed: profile, cpu/);
    expect(message(["dai_engine_version"])).toBe('update_mask: "dai_engine_version" cannot be changed after create');
    expect(message(["*", "cpu"])).toBe("update_mask: * must be the only path when it is used");
  });

  it("is exact and case-sensitive, with a hint for JSON names", () => {
    expect(message(["displayName"])).toMatch(
      /unknown path "displayName" \(paths are exact snake_case field names: did you mean "display_name"\?\)/,
    );
    expect(message(["CPU"])).toMatch(/did you mean "cpu"/);
    expect(message([" cpu"])).toMatch(/unknown path " cpu"/);
    expect(message(["cpu.value"])).toMatch(/unknown path "cpu.value"/);
  });

  it("names a custom field", () => {
    expect(() => checkUpdateMask([], { ...rules, field: "mask" })).toThrow(/\] mask: is required/);
  });

  it("maps paths to camelCase names", () => {
    expect(maskPathToCamelCase("max_idle_duration")).toBe("maxIdleDuration");
    expect(maskPathToCamelCase("cpu_constraint.max")).toBe("cpuConstraint.max");
    expect(maskPathToCamelCase("h2o_options")).toBe("h2oOptions");
  });
});

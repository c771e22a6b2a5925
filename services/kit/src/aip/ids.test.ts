import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  type IdValidator,
  checkAnnotations,
  checkField,
  isAlias,
  validateAlias,
  validateAnnotationKey,
  validateDisplayName,
  validatePortId,
  validateProcessId,
  validateResourceId,
  validateSecretVersionId,
  validateVersionId,
  validateVersionIdOrAlias,
} from "./ids.js";

const cases: Array<[string, IdValidator, string[], string[]]> = [
  [
    "resource id",
    validateResourceId,
    ["a", "my-engine", "e1", "a".repeat(63), "a-b-c9"],
    ["", "A", "1abc", "-a", "a-", "a_b", "a.b", "a b", "a".repeat(64), "é", "a\n", "ab/c"],
  ],
  [
    "process id",
    validateProcessId,
    ["1", "9abc", "a", "proc-2", "0".repeat(63)],
    ["", "-1", "1-", "A1", "a_b", "1".repeat(64)],
  ],
  [
    "version id",
    validateVersionId,
    [
      "1.10.3",
      "1.10.3.1",
      "1.10.3-alpha",
      "1.10.3-alpha.1",
      "0.0.0",
      "3.46.0.1",
      "1.2.3-rc-1",
      `1.${"1".repeat(59)}.1`,
      "1",
      "12",
      "1.10",
      "1-beta",
    ],
    [
      "",
      "01",
      "1.",
      "01.2.3",
      "1.02.3",
      "1.2.3-",
      "1.2.3+build",
      "v1.2.3",
      "1.2.3 ",
      "latest",
      `1.${"1".repeat(60)}.1`,
      "1..2.3",
    ],
  ],
  ["alias", validateAlias, ["latest", "stable-1", "a"], ["", "1latest", "Latest", "latest-", "a".repeat(64)]],
  ["port id", validatePortId, ["1024", "8080", "65535"], ["", "80", "1023", "65536", "08080", "8080a", "-1", "99999"]],
  ["secret version id", validateSecretVersionId, ["1", "42", "latest"], ["", "0", "01", "-1", "Latest", "1.0"]],
  [
    "display name",
    validateDisplayName,
    ["", "My engine", "é".repeat(63), "😀".repeat(63)],
    ["x".repeat(64), "😀".repeat(64)],
  ],
  [
    "annotation key",
    validateAnnotationKey,
    ["a", "app.kubernetes.io", "Team_Name-1", "x".repeat(63), "9"],
    ["", "-a", "a-", ".a", "a_", "a b", "a/b", "x".repeat(64)],
  ],
];

describe("id rules", () => {
  for (const [label, validate, good, bad] of cases) {
    it(`${label}: accepts ${good.length} and rejects ${bad.length} values`, () => {
      for (const v of good) expect(validate(v), JSON.stringify(v)).toBeUndefined();
      for (const v of bad) expect(validate(v), JSON.stringify(v)).toMatch(/^must /);
    });
  }

  it("version names take an id or an alias, and aliases never look like versions", () => {
    expect(validateVersionIdOrAlias("1.10.3")).toBeUndefined();
    expect(validateVersionIdOrAlias("latest")).toBeUndefined();
    expect(validateVersionIdOrAlias("1.10")).toBeUndefined();
    expect(validateVersionIdOrAlias("1.x")).toMatch(/^must be a version id/);
    expect(isAlias("latest")).toBe(true);
    expect(isAlias("1.10.3")).toBe(false);
  });

  it("messages quote the value, cut short", () => {
    expect(validateResourceId("Bad")).toMatch(/\(got "Bad"\)$/);
    expect(validateResourceId("x".repeat(500))!.length).toBeLessThan(300);
  });

  it("checkField throws INVALID_ARGUMENT naming the field", () => {
    expect(() => checkField("dai_engine_id", "ok-id", validateResourceId)).not.toThrow();
    try {
      checkField("dai_engine_id", "Bad_Id", validateResourceId);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.InvalidArgument);
      expect((err as ConnectError).rawMessage).toMatch(/^dai_engine_id: must be 1-63 characters/);
    }
  });

  it("checkAnnotations names the bad key", () => {
    expect(() => checkAnnotations("annotations", { ok: "1", "app.io/x": "2" })).toThrow(
      /annotations\["app.io\/x"\]: key must be 1-63 characters/,
    );
    expect(() => checkAnnotations("annotations", { "a.b_c-d": "" })).not.toThrow();
    expect(() => checkAnnotations("annotations", undefined)).not.toThrow();
  });
});

import { describe, expect, it } from "vitest";
import { readCommonEnv } from "./common.js";
import { ConfigError, readBool, readEnum, readInt, readString, readUrl, readUrlList } from "./env.js";

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error("expected a ConfigError");
}

describe("readers", () => {
  it("reads strings with defaults, optional and required", () => {
    expect(readString({ A: " x " }, "A")).toBe("x");
    expect(readString({}, "A", { default: "d" })).toBe("d");
    expect(readString({ A: "" }, "A", { default: "d" })).toBe("d");
    expect(readString({}, "A", { optional: true })).toBeUndefined();
    const err = errorOf(() => readString({}, "AIEM_SOMETHING"));
    expect(err.variable).toBe("AIEM_SOMETHING");
    expect(err.message).toBe("AIEM_SOMETHING: is required but not set");
  });

  it.each([
    ["12", 12],
    ["+3", 3],
    ["-1", -1],
  ])("reads the integer %s", (value, expected) => {
    expect(readInt({ N: value }, "N")).toBe(expected);
  });

  it.each(["1.5", "abc", "1e3", "0x10", "12 apples"])("rejects the integer %j naming the variable", (value) => {
    expect(errorOf(() => readInt({ AIEM_N: value }, "AIEM_N")).message).toMatch(/^AIEM_N: must be an integer/);
  });

  it("checks integer ranges", () => {
    expect(errorOf(() => readInt({ P: "70000" }, "P", { min: 0, max: 65535 })).message).toBe(
      "P: must be between 0 and 65535, got 70000",
    );
    expect(readInt({}, "P", { default: 5, min: 0 })).toBe(5);
    expect(readInt({}, "P", { optional: true })).toBeUndefined();
  });

  it("reads booleans", () => {
    for (const v of ["1", "true", "YES", "on"]) expect(readBool({ B: v }, "B")).toBe(true);
    for (const v of ["0", "false", "No", "off"]) expect(readBool({ B: v }, "B")).toBe(false);
    expect(readBool({}, "B", { default: true })).toBe(true);
    expect(errorOf(() => readBool({ AIEM_B: "maybe" }, "AIEM_B")).message).toMatch(/^AIEM_B: must be true or false/);
  });

  it("reads URLs and checks their scheme", () => {
    expect(readUrl({ U: "https://id.example.com/realms/x" }, "U", { protocols: ["https"] })).toBe(
      "https://id.example.com/realms/x",
    );
    expect(errorOf(() => readUrl({ U: "not a url" }, "U")).message).toMatch(/^U: must be a URL/);
    expect(errorOf(() => readUrl({ U: "ftp://x" }, "U", { protocols: ["http", "https"] })).message).toBe(
      "U: must be a http:// or https:// URL, got ftp://",
    );
    expect(readUrlList({ U: "nats://a:4222, nats://b:4222" }, "U", { protocols: ["nats"] })).toEqual([
      "nats://a:4222",
      "nats://b:4222",
    ]);
  });

  it("does not echo passwords in errors", () => {
    const err = errorOf(() =>
      readUrl({ DATABASE_URL: "mysql://u:secret@h/db" }, "DATABASE_URL", { protocols: ["postgres"] }),
    );
    expect(err.message).not.toContain("secret");
    const bad = errorOf(() => readUrl({ DATABASE_URL: "//u:secret@h:x/db" }, "DATABASE_URL"));
    expect(bad.message).not.toContain("secret");
  });

  it("reads enums", () => {
    expect(readEnum({ E: "local" }, "E", ["local", "kubernetes"])).toBe("local");
    expect(readEnum({}, "E", ["local", "kubernetes"], { default: "local" })).toBe("local");
    expect(errorOf(() => readEnum({ AIEM_RUNTIME: "docker" }, "AIEM_RUNTIME", ["local", "kubernetes"])).message).toBe(
      'AIEM_RUNTIME: must be one of local, kubernetes, got "docker"',
    );
  });
});

describe("readCommonEnv", () => {
  it("applies the defaults", () => {
    const cfg = readCommonEnv({});
    expect(cfg).toMatchObject({
      host: "127.0.0.1",
      port: 8080,
      policyFile: undefined,
      oidcIssuer: undefined,
      oidcAudience: undefined,
      oidcRolesClaim: "roles",
      tokenMaxLifetimeSeconds: 86400,
      databaseUrl: undefined,
      natsUrl: undefined,
      natsServers: undefined,
      contentUrl: undefined,
      pathUrls: false,
    });
    expect(cfg.dataDir).toBe(`${process.cwd()}/.aiem`);
  });

  it("reads every setting", () => {
    const cfg = readCommonEnv({
      AIEM_HOST: "0.0.0.0",
      AIEM_PORT: "0",
      AIEM_DATA_DIR: "/var/lib/aiem",
      AIEM_POLICY_FILE: "/etc/aiem/policy.yaml",
      AIEM_OIDC_ISSUER: "https://id.example.com",
      AIEM_OIDC_AUDIENCE: "aiem",
      AIEM_OIDC_ROLES_CLAIM: "realm_access.roles",
      AIEM_TOKEN_MAX_LIFETIME: "3600",
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test",
      NATS_URL: "nats://127.0.0.1:4222",
      AIEM_CONTENT_URL: "https://aiem-content.example.com",
      AIEM_PATH_URLS: "true",
    });
    expect(cfg).toEqual({
      host: "0.0.0.0",
      port: 0,
      dataDir: "/var/lib/aiem",
      policyFile: "/etc/aiem/policy.yaml",
      oidcIssuer: "https://id.example.com",
      oidcAudience: "aiem",
      oidcRolesClaim: "realm_access.roles",
      tokenMaxLifetimeSeconds: 3600,
      databaseUrl: "postgres://postgres@127.0.0.1:5432/test",
      natsUrl: "nats://127.0.0.1:4222",
      natsServers: ["nats://127.0.0.1:4222"],
      contentUrl: "https://aiem-content.example.com",
      pathUrls: true,
    });
  });

  it.each([
    ["AIEM_PORT", "http"],
    ["AIEM_PORT", "65536"],
    ["AIEM_OIDC_ISSUER", "id.example.com"],
    ["AIEM_TOKEN_MAX_LIFETIME", "10"],
    ["DATABASE_URL", "mysql://h/db"],
    ["NATS_URL", "http://127.0.0.1:4222"],
  ])("names %s when it is invalid (%s)", (variable, value) => {
    const err = errorOf(() => readCommonEnv({ [variable]: value }));
    expect(err.variable).toBe(variable);
    expect(err.message.startsWith(`${variable}: `)).toBe(true);
  });
});

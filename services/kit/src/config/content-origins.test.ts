import { describe, expect, it } from "vitest";
import { contentDomain, createContentUrls, parseContentHost, readContentEnv } from "./content-origins.js";
import { ConfigError } from "./env.js";

const uid = "0b6a3e8e-1c2d-4e5f-8a9b-0c1d2e3f4a5b";

describe("content origins", () => {
  it("reads the content URL and the path-URL opt-in, refusing what cannot be a base domain", () => {
    expect(readContentEnv({})).toEqual({ contentUrl: undefined, pathUrls: false });
    expect(readContentEnv({ AIEM_CONTENT_URL: "https://content.example.com/", AIEM_PATH_URLS: "true" })).toEqual({
      contentUrl: "https://content.example.com",
      pathUrls: true,
    });
    expect(() => readContentEnv({ AIEM_CONTENT_URL: "https://content.example.com/base" })).toThrow(ConfigError);
    expect(() => readContentEnv({ AIEM_CONTENT_URL: "http://127.0.0.1:8080" })).toThrow(/AIEM_CONTENT_URL.*IP address/);
    expect(() => readContentEnv({ AIEM_CONTENT_URL: "ftp://example.com" })).toThrow(ConfigError);
  });

  it("builds engine and port URLs on *.localhost with the public URL's scheme and port by default", () => {
    const urls = createContentUrls({}, () => "http://127.0.0.1:8080");
    expect(urls.engine(uid)).toBe(`http://${uid}.engines.localhost:8080/engines/${uid}/`);
    expect(urls.port(uid, 5000)).toBe(`http://5000-${uid}.sandboxes.localhost:8080/`);
    expect(urls.publicPort(uid, 5000)).toBe(`http://5000-${uid}.public.localhost:8080/`);
    expect(contentDomain({}, "http://127.0.0.1:8080")).toBe("localhost");
  });

  it("builds them on the configured base, or as paths of the public URL when path URLs are on", () => {
    const configured = createContentUrls({ contentUrl: "https://c.example.com" }, () => "https://aiem.example.com");
    expect(configured.engine(uid)).toBe(`https://${uid}.engines.c.example.com/engines/${uid}/`);
    expect(configured.port(uid, 443)).toBe(`https://443-${uid}.sandboxes.c.example.com/`);
    const paths = createContentUrls({ pathUrls: true }, () => "https://aiem.example.com");
    expect(paths.engine(uid)).toBe(`https://aiem.example.com/engines/${uid}/`);
    expect(paths.port(uid, 5000)).toBe(`https://aiem.example.com/sandboxes/${uid}/ports/5000/`);
    expect(paths.publicPort(uid, 5000)).toBe(`https://aiem.example.com/sandboxes/${uid}/public/5000/`);
  });

  it("parses content hosts, ignoring the port and case, and nothing else", () => {
    expect(parseContentHost(`${uid}.engines.localhost:8080`, "localhost")).toEqual({ kind: "engine", uid });
    expect(parseContentHost(`${uid.toUpperCase()}.ENGINES.c.example.com.`, "c.example.com")).toEqual({
      kind: "engine",
      uid,
    });
    expect(parseContentHost(`5000-${uid}.sandboxes.localhost`, "localhost")).toEqual({
      kind: "port",
      uid,
      port: 5000,
      public: false,
    });
    expect(parseContentHost(`80-${uid}.public.localhost:1`, "localhost")).toEqual({
      kind: "port",
      uid,
      port: 80,
      public: true,
    });
    for (const other of [
      "localhost:8080",
      "127.0.0.1:8080",
      `${uid}.engines.localhost.evil.com`,
      `${uid}.engines.otherlocalhost`,
      `x.${uid}.engines.localhost`,
      `0-${uid}.sandboxes.localhost`,
      `70000-${uid}.sandboxes.localhost`,
      `5000-${uid}.engines.localhost`,
      `${uid}.sandboxes.localhost`,
      "not-a-uid.engines.localhost",
      undefined,
    ]) {
      expect(parseContentHost(other, "localhost"), String(other)).toBeUndefined();
    }
  });
});

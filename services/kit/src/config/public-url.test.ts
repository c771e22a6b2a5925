import { describe, expect, it } from "vitest";
import { defaultPublicUrl, readPublicUrl } from "./public-url.js";

describe("public URL", () => {
  it("reads AIEM_PUBLIC_URL without trailing slashes", () => {
    expect(readPublicUrl({})).toBeUndefined();
    expect(readPublicUrl({ AIEM_PUBLIC_URL: "https://aiem.example.com/base//" })).toBe("https://aiem.example.com/base");
    expect(() => readPublicUrl({ AIEM_PUBLIC_URL: "ftp://x" })).toThrow(/AIEM_PUBLIC_URL/);
  });

  it.each([
    ["127.0.0.1", "http://127.0.0.1:8080"],
    ["0.0.0.0", "http://127.0.0.1:8080"],
    ["::", "http://127.0.0.1:8080"],
    ["::1", "http://[::1]:8080"],
    ["aiem.internal", "http://aiem.internal:8080"],
  ])("defaults for host %s to %s", (host, url) => {
    expect(defaultPublicUrl(host, 8080)).toBe(url);
  });
});

import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  cookiesForUserContent,
  isOurCookie,
  pipeUserUpgradeAnswer,
  userSetCookie,
  userSetCookies,
} from "./user-content.js";

describe("cookies between browsers and user content", () => {
  it("knows our cookie names, with or without the __Host-/__Secure- prefixes, in any case", () => {
    for (const name of ["aiem_port_token", "aiem_engine_token", "__Host-aiem_session", "__secure-AIEM_x", " aiem_a"])
      expect(isOurCookie(name)).toBe(true);
    for (const name of ["_xsrf", "session", "__Host-session", "my_aiem_x", ""]) expect(isOurCookie(name)).toBe(false);
  });

  it("keeps the browser's other cookies for the program and drops ours", () => {
    expect(cookiesForUserContent("a=1; aiem_port_token=t; __Host-aiem_session=s; b=2")).toBe("a=1; b=2");
    expect(cookiesForUserContent(["aiem_engine_token=t", "c=3"])).toBe("c=3");
    expect(cookiesForUserContent("aiem_port_token=t")).toBeUndefined();
    expect(cookiesForUserContent(undefined)).toBeUndefined();
    // A value without a name is the program's (browsers send `=v` or `v` that way).
    expect(cookiesForUserContent("v; =w")).toBe("v; =w");
  });

  it("makes the program's cookies host-only and refuses our names", () => {
    expect(userSetCookie("a=1; Domain=localhost; Path=/; HttpOnly")).toBe("a=1; Path=/; HttpOnly");
    expect(userSetCookie("a=1;domain=.sandboxes.localhost;Secure")).toBe("a=1;Secure");
    expect(userSetCookie("a=1; DOMAIN = x; Domain=y; SameSite=Lax")).toBe("a=1; SameSite=Lax");
    expect(userSetCookie("_xsrf=2|abc; Path=/")).toBe("_xsrf=2|abc; Path=/");
    expect(userSetCookie("aiem_engine_token=x; Path=/")).toBeUndefined();
    expect(userSetCookie("__Host-aiem_session=x; Secure; Path=/")).toBeUndefined();
    expect(userSetCookie("__SECURE-aiem_session=x; Secure")).toBeUndefined();
    expect(userSetCookies(["a=1; Domain=localhost", "aiem_port_token=x", "b=2"])).toEqual(["a=1", "b=2"]);
    expect(userSetCookies("c=3; domain=localhost")).toEqual(["c=3"]);
    expect(userSetCookies(undefined)).toEqual([]);
  });

  it("rewrites the Set-Cookie lines of an upgrade's answer and passes the bytes after it untouched", async () => {
    const from = new PassThrough();
    const to = new PassThrough();
    pipeUserUpgradeAnswer(from, to);
    const got: Buffer[] = [];
    to.on("data", (d: Buffer) => got.push(d));
    from.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSet-Cookie: a=1; Domain=localhost\r\n");
    from.write("set-cookie: aiem_port_token=x\r\nConnection: Upgrade\r\n\r\nfirst frame; Domain=localhost\r\n");
    from.end("set-cookie: b=2; Domain=x");
    await new Promise((r) => to.on("end", r));
    expect(Buffer.concat(got).toString("latin1")).toBe(
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSet-Cookie: a=1\r\nConnection: Upgrade\r\n\r\nfirst frame; Domain=localhost\r\nset-cookie: b=2; Domain=x",
    );
  });
});

// Calls to the harness's host as its REST clients make them, as one of the test users.
import type { TestHost } from "../../../../edge/src/testing/test-host.js";
import { USERS, type Who } from "./fixtures.js";
import type { Reply } from "./rest-assertions.js";

export type RestCall = (
  method: string,
  path: string,
  options?: { who?: Who; user?: string; body?: unknown; headers?: Record<string, string> },
) => Promise<Reply>;

export interface RestClient {
  readonly rest: RestCall;
  /** A token of `user` (root is an administrator), made once. */
  token(user: string): Promise<string>;
}

/** A REST client of `host` that keeps every response body it reads in `responses`. */
export function createRestClient(host: TestHost, responses: string[]): RestClient {
  const tokens = new Map<string, Promise<string>>();
  const token = (user: string) => {
    let p = tokens.get(user);
    if (!p) tokens.set(user, (p = host.token(user, { admin: user === "root" })));
    return p;
  };
  const rest: RestCall = async (method, p, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    const user =
      o.user ?? (o.who === "anonymous" ? undefined : USERS[(o.who ?? "creator") as Exclude<Who, "anonymous">]);
    if (user) headers.authorization = `Bearer ${await token(user)}`;
    if (o.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${host.url}${p}`, {
      method,
      headers,
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    });
    const text = await res.text();
    responses.push(text);
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, text, body };
  };
  return { rest, token };
}

// Calls to the harness's host as its REST clients make them, as one of the test users.
import type { TestHost } from "../../../../edge/src/testing/test-host.js";
import { USERS, type Who } from "./fixtures.js";
import { type Reply, restCall } from "@aiem/kit/testing";

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
    if (!p) {
      p = host.token(user, { admin: user === "root" });
      tokens.set(user, p);
    }
    return p;
  };
  const rest: RestCall = async (method, p, o = {}) => {
    const user =
      o.user ?? (o.who === "anonymous" ? undefined : USERS[(o.who ?? "creator") as Exclude<Who, "anonymous">]);
    const bearer = user ? await token(user) : undefined;
    const reply = await restCall(host.url, method, p, {
      ...(bearer ? { token: bearer } : {}),
      body: o.body,
      ...(o.headers ? { headers: o.headers } : {}),
    });
    responses.push(reply.text);
    return reply;
  };
  return { rest, token };
}

// REST calls against a test host as one of the test policy's fixed callers.
import { USERS, type Who } from "./test-policy.js";

export interface Reply {
  readonly status: number;
  readonly body: any;
  readonly text: string;
  readonly headers: Headers;
}

export interface CallOptions {
  readonly who?: Who;
  readonly user?: string;
  readonly roles?: readonly string[];
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** A REST client of the host at `url`, signing in with `token` as the caller each call names. */
export function createRestClient(
  url: () => string,
  token: (user: string, roles?: readonly string[]) => Promise<string>,
): (method: string, path: string, options?: CallOptions) => Promise<Reply> {
  return async (method, p, o = {}) => {
    const who = o.who ?? "admin";
    const headers: Record<string, string> = { ...o.headers };
    const user = o.user ?? (who === "anonymous" ? undefined : USERS[who]);
    if (user) headers.authorization = `Bearer ${await token(user, o.roles)}`;
    if (o.body !== undefined) headers["content-type"] = "application/json";
    const res = await fetch(`${url()}${p}`, {
      method,
      headers,
      ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
      redirect: "manual",
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, text, body, headers: res.headers };
  };
}

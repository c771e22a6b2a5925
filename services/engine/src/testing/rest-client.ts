// REST calls against a test host as one of the test policy's fixed callers.
import { type Reply, restCall } from "@aiem/kit/testing";
import { USERS, type Who } from "./test-policy.js";

export type { Reply } from "@aiem/kit/testing";

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
    const user = o.user ?? (who === "anonymous" ? undefined : USERS[who]);
    const bearer = user ? await token(user, o.roles) : undefined;
    return restCall(url(), method, p, {
      ...(bearer ? { token: bearer } : {}),
      body: o.body,
      ...(o.headers ? { headers: o.headers } : {}),
      redirect: "manual",
    });
  };
}

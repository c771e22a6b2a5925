// A small REST client for the distributed tests: JSON in and out, a bearer token, and waits on
// resource states that read the API (never sleeps standing in for a state).
import type { RestJson } from "@aiem/kit/testing";

export interface Answer {
  readonly status: number;
  readonly body: RestJson;
}

export interface RestClient {
  call(method: string, path: string, body?: unknown): Promise<Answer>;
  /** The body of a 200 answer; anything else throws with the answer in the message. */
  ok(method: string, path: string, body?: unknown): Promise<RestJson>;
  /** Reads `name` until `field` of its answer is one of `states`; throws after `timeoutMs`. */
  waitFor(name: string, field: string, states: readonly string[], timeoutMs: number): Promise<RestJson>;
}

export const DAI_PROFILE = "workspaces/global/daiEngineProfiles/default";
export const DAI_VERSION = "workspaces/global/daiEngineVersions/1.11.0";
export const SANDBOX_IMAGE = "workspaces/global/sandboxEngineImages/default";
export const SANDBOX_TEMPLATE = "workspaces/global/sandboxEngineTemplates/default";

export function createRestClient(baseUrl: string, token: string): RestClient {
  async function call(method: string, path: string, body?: unknown): Promise<Answer> {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.status, body: parsed };
  }
  async function ok(method: string, path: string, body?: unknown): Promise<RestJson> {
    const answer = await call(method, path, body);
    if (answer.status !== 200) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }
  return {
    call,
    ok,
    async waitFor(name, field, states, timeoutMs) {
      const until = Date.now() + timeoutMs;
      let last: Answer | undefined;
      for (;;) {
        last = await call("GET", `/v1/${name}`);
        const resource =
          last.status === 200 ? (Object.values(last.body as object)[0] as Record<string, unknown>) : undefined;
        if (resource && states.includes(String(resource[field]))) return resource;
        // A failed resource does not recover on its own: no point waiting out the time.
        if (resource?.[field] === "STATE_FAILED") throw new Error(`${name} FAILED: ${JSON.stringify(last.body)}`);
        if (Date.now() > until)
          throw new Error(
            `${name} did not reach ${states.join("/")} within ${timeoutMs} ms: ${last.status} ${JSON.stringify(last.body)}`,
          );
        await new Promise((r) => setTimeout(r, 200));
      }
    },
  };
}

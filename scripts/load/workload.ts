// The load command's workload: what it sets up first, and the mix of calls each client repeats.
import type { Request } from "autocannon";

export interface Fixture {
  readonly sandbox: string;
  readonly engine: string;
  readonly file: string;
}

// biome-ignore lint/suspicious/noExplicitAny: a JSON answer the caller reads field by field
async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as unknown;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** A running sandbox with a file in it, and a paused DAI engine, in workspace team-a. */
export async function prepareWorkload(base: string, token: string): Promise<Fixture> {
  const sandbox = (
    await call(base, token, "POST", "/v1/workspaces/team-a/sandboxEngines?sandboxEngineId=load", {
      sandboxEngineImage: "workspaces/global/sandboxEngineImages/default",
      sandboxEngineTemplate: "workspaces/global/sandboxEngineTemplates/default",
    })
  ).sandboxEngine.name as string;
  const engine = (
    await call(base, token, "POST", "/v1/workspaces/team-a/daiEngines?daiEngineId=load", {
      profile: "workspaces/global/daiEngineProfiles/default",
      daiEngineVersion: "workspaces/global/daiEngineVersions/latest",
    })
  ).daiEngine.name as string;
  const reach = async (name: string, field: string, wanted: string) => {
    for (const until = Date.now() + 60_000; ; ) {
      const state = (await call(base, token, "GET", `/v1/${name}`))[field].state as string;
      if (state === wanted) return;
      if (Date.now() > until) throw new Error(`${name} stayed ${state}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await reach(sandbox, "sandboxEngine", "STATE_RUNNING");
  // A DAI engine's settings change only while it is paused, as in the real service.
  await reach(engine, "daiEngine", "STATE_RUNNING");
  await call(base, token, "POST", `/v1/${engine}:pause`, {});
  await reach(engine, "daiEngine", "STATE_PAUSED");
  const file = "/tmp/load/input.txt";
  await call(base, token, "POST", `/v1/${sandbox}/filesystem:writeFile`, {
    path: file,
    content: Buffer.from("load test input\n".repeat(64)).toString("base64"),
    createParentDirectories: true,
  });
  return { sandbox, engine, file };
}

interface Count {
  ok: number;
  failed: number;
}

export interface Workload {
  readonly requests: Request[];
  readonly describe: string;
  counts(): Map<string, Count>;
  /** The first failed answer of each kind and status (ten at most), for the report. */
  failures(): string[];
}

/** 14 reads and 6 writes in every round of 20 calls, over all three parts. */
export function mixedWorkload(fixture: Fixture): Workload {
  const { sandbox, engine, file } = fixture;
  let serial = 0;
  const unique = (): string => `${process.pid}-${++serial}`;
  const kinds: { kind: string; weight: number; request: () => Omit<Request, "onResponse"> }[] = [
    {
      kind: "read: list DAI versions",
      weight: 3,
      request: () => ({ method: "GET", path: "/v1/workspaces/global/daiEngineVersions" }),
    },
    {
      kind: "read: list profiles",
      weight: 2,
      request: () => ({ method: "GET", path: "/v1/workspaces/global/daiEngineProfiles" }),
    },
    { kind: "read: get a DAI engine", weight: 3, request: () => ({ method: "GET", path: `/v1/${engine}` }) },
    {
      kind: "read: list DAI engines",
      weight: 2,
      request: () => ({ method: "GET", path: "/v1/workspaces/team-a/daiEngines" }),
    },
    { kind: "read: get the sandbox", weight: 2, request: () => ({ method: "GET", path: `/v1/${sandbox}` }) },
    {
      kind: "read: a file in the sandbox",
      weight: 2,
      request: () => ({ method: "GET", path: `/v1/${sandbox}/filesystem:readFile?path=${encodeURIComponent(file)}` }),
    },
    {
      kind: "write: create a secret",
      weight: 1,
      request: () => ({ method: "POST", path: `/v1/workspaces/team-a/secrets?secretId=load-${unique()}`, body: "{}" }),
    },
    {
      kind: "write: rename the DAI engine",
      weight: 1,
      request: () => ({
        method: "PATCH",
        path: `/v1/${engine}?updateMask=display_name`,
        body: JSON.stringify({ displayName: `load ${unique()}` }),
      }),
    },
    {
      kind: "write: run a process in the sandbox",
      weight: 2,
      request: () => ({
        method: "POST",
        path: `/v1/${sandbox}/processes?autoRun=true`,
        body: JSON.stringify({ command: "true" }),
      }),
    },
    {
      kind: "write: write a file in the sandbox",
      weight: 2,
      request: () => ({
        method: "POST",
        path: `/v1/${sandbox}/filesystem:writeFile`,
        body: JSON.stringify({
          path: `/tmp/load/out-${unique()}.txt`,
          content: Buffer.from(`written ${serial}\n`).toString("base64"),
        }),
      }),
    },
  ];
  const counts = new Map<string, Count>(kinds.map(({ kind }) => [kind, { ok: 0, failed: 0 }]));
  const failures = new Map<string, string>();
  // Round-robin over the kinds by weight, so that even a short run mixes reads and writes.
  const order = Array.from({ length: Math.max(...kinds.map((k) => k.weight)) }, (_, i) =>
    kinds.filter((k) => k.weight > i),
  ).flat();
  const requests: Request[] = order.map(({ kind, request }) => ({
    // Each round asks again, so writes get fresh ids.
    setupRequest: (req: Request) => ({ ...req, ...request() }),
    onResponse: (status: number, body: string) => {
      const count = counts.get(kind)!;
      if (status >= 200 && status < 300) count.ok++;
      else {
        count.failed++;
        const key = `${kind}: ${status}`;
        if (!failures.has(key) && failures.size < 10) failures.set(key, `${key} ${body.slice(0, 300)}`);
      }
    },
  }));
  const reads = kinds.filter((k) => k.kind.startsWith("read")).reduce((n, k) => n + k.weight, 0);
  return {
    requests,
    describe: `${reads} reads and ${requests.length - reads} writes in every round of ${requests.length} calls`,
    counts: () => counts,
    failures: () => [...failures.values()],
  };
}

// Every sandbox call over REST as the sandbox's creator, another member of its workspace, an
// administrator, a viewer and an anonymous caller. Sandbox engines are visible to their creator
// and administrators; what runs inside (files, processes, ports, drive, secure store) is for the
// creator alone, administrators included out. To another member the sandbox does not exist: every
// refusal is the NOT_FOUND of a missing sandbox, so names cannot be probed.
import { beforeAll, describe, expect, it } from "vitest";
import type { RestJson } from "@aiem/kit/testing";
import { b64, expectError, ok, sharedHarness, WS, type Reply, type SandboxHarness, type Who } from "./testing/index.js";

let h: SandboxHarness;
let sb: RestJson;
let secretVersion: string;
let n = 0;
const fresh = (p: string) => `${p}${++n}`;

beforeAll(async () => {
  h = await sharedHarness();
  sb = await h.createSandbox("perm");
  const secret = ok(await h.rest("POST", `/v1/workspaces/${WS}/secrets?secretId=perm-secret`, { body: {} })).secret
    .name;
  ok(await h.rest("POST", `/v1/${secret}/versions`, { body: { value: b64("perm") } }));
  secretVersion = `${secret}/versions/latest`;
  ok(
    await h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
      body: { path: "/workspace/up.txt", content: b64("up") },
    }),
  );
  ok(
    await h.rest("POST", `/v1/${sb.name}/h2oDrive:uploadFile`, {
      body: { workspace: `workspaces/${WS}`, localPath: "/workspace/up.txt", remotePath: "perm/in.txt" },
    }),
  );
});

type Rule = "creator-only" | "visible" | "own" | "list";

interface Call {
  readonly name: string;
  readonly rule: Rule;
  run(who: Who): Promise<Reply>;
}

const as = (who: Who) => ({ who });
const setupFile = async () => {
  const p = `/workspace/${fresh("f")}`;
  ok(await h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, { body: { path: p, content: b64("x") } }));
  return p;
};
const setupProcess = async (query: string, body: Record<string, unknown> = { command: "true" }) =>
  ok(await h.rest("POST", `/v1/${sb.name}/processes?${query}`, { body })).process.name as string;
const setupPort = async () => {
  const port = 2000 + ++n;
  ok(await h.rest("POST", `/v1/${sb.name}/ports?portId=${port}`, { body: {} }));
  return `${sb.name}/ports/${port}`;
};
const setupSandbox = async () =>
  ok(
    await h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${fresh("ps")}`, {
      body: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template },
    }),
  ).sandboxEngine.name as string;

const CALLS: Call[] = [
  // Sandbox engines.
  {
    name: "POST sandboxEngines",
    rule: "own",
    run: (who) =>
      h.rest("POST", `/v1/workspaces/${WS}/sandboxEngines?sandboxEngineId=${fresh("pc")}`, {
        who,
        body: { sandboxEngineImage: h.image, sandboxEngineTemplate: h.template },
      }),
  },
  { name: "GET sandboxEngines/{id}", rule: "visible", run: (who) => h.rest("GET", `/v1/${sb.name}`, as(who)) },
  {
    name: "GET sandboxEngines",
    rule: "list",
    run: (who) => h.rest("GET", `/v1/workspaces/${WS}/sandboxEngines`, as(who)),
  },
  {
    name: "DELETE sandboxEngines/{id}",
    rule: "visible",
    run: async (who) => h.rest("DELETE", `/v1/${await setupSandbox()}`, as(who)),
  },
  {
    name: "POST sandboxEngines/{id}:terminate",
    rule: "visible",
    run: async (who) => h.rest("POST", `/v1/${await setupSandbox()}:terminate`, { who, body: {} }),
  },
  // Filesystem.
  {
    name: "POST filesystem:createDirectory",
    rule: "creator-only",
    run: (who) =>
      h.rest("POST", `/v1/${sb.name}/filesystem:createDirectory`, { who, body: { path: `/workspace/${fresh("d")}` } }),
  },
  {
    name: "POST filesystem:makeDirectory",
    rule: "creator-only",
    run: (who) => h.rest("POST", `/v1/${sb.name}/filesystem:makeDirectory`, { who, body: { path: "/workspace/made" } }),
  },
  {
    name: "GET filesystem:listDirectory",
    rule: "creator-only",
    run: (who) => h.rest("GET", `/v1/${sb.name}/filesystem:listDirectory?path=/workspace`, as(who)),
  },
  {
    name: "POST filesystem:move",
    rule: "creator-only",
    run: async (who) =>
      h.rest("POST", `/v1/${sb.name}/filesystem:move`, {
        who,
        body: { sourcePath: await setupFile(), destinationPath: `/workspace/${fresh("m")}` },
      }),
  },
  {
    name: "GET filesystem:readFile",
    rule: "creator-only",
    run: async (who) => h.rest("GET", `/v1/${sb.name}/filesystem:readFile?path=${await setupFile()}`, as(who)),
  },
  {
    name: "POST filesystem:remove",
    rule: "creator-only",
    run: async (who) => h.rest("POST", `/v1/${sb.name}/filesystem:remove`, { who, body: { path: await setupFile() } }),
  },
  {
    name: "GET filesystem:statFile",
    rule: "creator-only",
    run: (who) => h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=/workspace`, as(who)),
  },
  {
    name: "POST filesystem:writeFile",
    rule: "creator-only",
    run: (who) =>
      h.rest("POST", `/v1/${sb.name}/filesystem:writeFile`, {
        who,
        body: { path: `/workspace/${fresh("w")}`, content: b64("w") },
      }),
  },
  // Processes.
  {
    name: "POST processes",
    rule: "creator-only",
    run: (who) => h.rest("POST", `/v1/${sb.name}/processes?autoRun=true`, { who, body: { command: "true" } }),
  },
  {
    name: "GET processes/{id}",
    rule: "creator-only",
    run: async (who) => h.rest("GET", `/v1/${await setupProcess("")}`, as(who)),
  },
  { name: "GET processes", rule: "creator-only", run: (who) => h.rest("GET", `/v1/${sb.name}/processes`, as(who)) },
  {
    name: "DELETE processes/{id}",
    rule: "creator-only",
    run: async (who) => h.rest("DELETE", `/v1/${await setupProcess("")}`, as(who)),
  },
  {
    name: "POST processes/{id}:start",
    rule: "creator-only",
    run: async (who) => h.rest("POST", `/v1/${await setupProcess("")}:start`, { who, body: {} }),
  },
  {
    name: "POST processes/{id}:wait",
    rule: "creator-only",
    run: async (who) => h.rest("POST", `/v1/${await setupProcess("autoRun=true")}:wait`, { who, body: {} }),
  },
  {
    name: "POST processes/{id}:sendSignal",
    rule: "creator-only",
    run: async (who) =>
      h.rest("POST", `/v1/${await setupProcess("autoRun=true", { command: "sleep", args: ["30"] })}:sendSignal`, {
        who,
        body: { signal: 9 },
      }),
  },
  {
    name: "GET processes/{id}:readOutput",
    rule: "creator-only",
    run: async (who) => h.rest("GET", `/v1/${await setupProcess("autoRun=true")}:readOutput`, as(who)),
  },
  {
    name: "GET processes/{id}:streamOutput",
    rule: "creator-only",
    run: async (who) => h.rest("GET", `/v1/${await setupProcess("autoRun=true")}:streamOutput`, as(who)),
  },
  {
    name: "GET processes/{id}:readOutputFrames",
    rule: "creator-only",
    run: async (who) => h.rest("GET", `/v1/${await setupProcess("autoRun=true")}:readOutputFrames`, as(who)),
  },
  // Ports.
  {
    name: "POST ports",
    rule: "creator-only",
    run: (who) => h.rest("POST", `/v1/${sb.name}/ports?portId=${3000 + ++n}`, { who, body: { displayName: "p" } }),
  },
  {
    name: "GET ports/{id}",
    rule: "creator-only",
    run: async (who) => h.rest("GET", `/v1/${await setupPort()}`, as(who)),
  },
  { name: "GET ports", rule: "creator-only", run: (who) => h.rest("GET", `/v1/${sb.name}/ports`, as(who)) },
  {
    name: "PATCH ports/{id}",
    rule: "creator-only",
    run: async (who) => h.rest("PATCH", `/v1/${await setupPort()}?updateMask=public`, { who, body: { public: true } }),
  },
  {
    name: "DELETE ports/{id}",
    rule: "creator-only",
    run: async (who) => h.rest("DELETE", `/v1/${await setupPort()}`, as(who)),
  },
  // Drive and secure store.
  {
    name: "POST h2oDrive:downloadFile",
    rule: "creator-only",
    run: (who) =>
      h.rest("POST", `/v1/${sb.name}/h2oDrive:downloadFile`, {
        who,
        body: { workspace: `workspaces/${WS}`, remotePath: "perm/in.txt", localPath: `/workspace/${fresh("dl")}` },
      }),
  },
  {
    name: "POST h2oDrive:uploadFile",
    rule: "creator-only",
    run: (who) =>
      h.rest("POST", `/v1/${sb.name}/h2oDrive:uploadFile`, {
        who,
        body: { workspace: `workspaces/${WS}`, localPath: "/workspace/up.txt", remotePath: `perm/${fresh("u")}` },
      }),
  },
  {
    name: "POST h2oSecureStore:revealSecretToFile",
    rule: "creator-only",
    run: (who) =>
      h.rest("POST", `/v1/${sb.name}/h2oSecureStore:revealSecretToFile`, {
        who,
        body: { secretVersion, path: `/workspace/${fresh("s")}` },
      }),
  },
  // Metrics.
  {
    name: "GET metrics:read",
    rule: "creator-only",
    run: (who) => h.rest("GET", `/v1/${sb.name}/metrics:read`, as(who)),
  },
];

const WHO: Who[] = ["creator", "member", "admin", "viewer", "anonymous"];

/** The calls a workspace viewer has the permission for (it still is not the creator). */
const VIEWER_MAY_READ = new Set([
  "GET sandboxEngines/{id}",
  "GET filesystem:listDirectory",
  "GET filesystem:readFile",
  "GET filesystem:statFile",
  "GET processes/{id}",
  "GET processes",
  "POST processes/{id}:wait",
  "GET processes/{id}:readOutput",
  "GET processes/{id}:streamOutput",
  "GET processes/{id}:readOutputFrames",
  "GET ports/{id}",
  "GET ports",
  "POST h2oDrive:uploadFile",
  "GET metrics:read",
]);

function allowed(rule: Rule, who: Who): boolean {
  switch (rule) {
    case "creator-only":
      return who === "creator";
    case "visible":
      return who === "creator" || who === "admin";
    case "own":
      return who === "creator" || who === "member" || who === "admin";
    case "list":
      return who !== "anonymous";
  }
}

describe("sandbox permissions over REST", () => {
  it("covers every method of the seven sandbox services", () => {
    expect(CALLS).toHaveLength(5 + 8 + 10 + 5 + 2 + 1 + 1);
  });

  const cases = CALLS.flatMap((call) => WHO.map((who) => ({ call, who, label: `${call.name} as ${who}` })));
  it.each(cases)("$label", async ({ call, who }) => {
    const r = await call.run(who);
    if (who === "anonymous") expectError(r, "UNAUTHENTICATED");
    else if (allowed(call.rule, who)) ok(r);
    // A viewer lacks the workspace permission to change anything; for what it may read, it is a
    // member like others. An administrator may see the sandbox and is told why; another member is
    // answered as if the sandbox did not exist.
    else if (who === "viewer" && !VIEWER_MAY_READ.has(call.name)) expectError(r, "PERMISSION_DENIED");
    else if (who === "admin") expectError(r, "PERMISSION_DENIED", "only the creator");
    else expectError(r, "NOT_FOUND", "not found");
  });

  it("answers another member exactly as for a sandbox that does not exist", async () => {
    const missing = `workspaces/${WS}/sandboxEngines/perm-none`;
    const strip = (r: Reply, name: string) => JSON.stringify(r.body).replaceAll(name, "<sandbox>");
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["GET", "/filesystem:statFile?path=/workspace/up.txt", undefined],
      ["GET", "/processes", undefined],
      ["GET", "/ports/8080", undefined],
      ["GET", "/metrics:read", undefined],
      ["POST", "/h2oDrive:uploadFile", { localPath: "/workspace/up.txt", remotePath: "x" }],
    ] as const) {
      const theirs = await h.rest(method, `/v1/${sb.name}${suffix}`, { who: "member", body });
      const none = await h.rest(method, `/v1/${missing}${suffix}`, { who: "member", body });
      expect([theirs.status, strip(theirs, sb.name)], suffix).toEqual([none.status, strip(none, missing)]);
      expectError(theirs, "NOT_FOUND");
    }
  });

  it("lists only a member's own sandboxes, all of them for an administrator", async () => {
    const names = (who: Who) =>
      h
        .rest("GET", `/v1/workspaces/${WS}/sandboxEngines?pageSize=1000`, as(who))
        .then((r) => ok(r).sandboxEngines.map((s: RestJson) => s.creator as string));
    expect(new Set(await names("member"))).toEqual(new Set(["users/bob"]));
    expect(await names("viewer")).toEqual([]);
    expect(new Set(await names("admin"))).toEqual(new Set(["users/alice", "users/bob", "users/root"]));
  });

  it("leaves the sandbox untouched when a call is refused", async () => {
    const target = await setupFile();
    for (const who of ["member", "admin"] as const) {
      expectError(
        await h.rest("POST", `/v1/${sb.name}/filesystem:remove`, { who, body: { path: target } }),
        who === "admin" ? "PERMISSION_DENIED" : "NOT_FOUND",
      );
      expectError(await h.rest("DELETE", `/v1/${sb.name}`, { who: "member" }), "NOT_FOUND");
    }
    ok(await h.rest("GET", `/v1/${sb.name}/filesystem:statFile?path=${target}`));
    expect(ok(await h.rest("GET", `/v1/${sb.name}`)).sandboxEngine.state).toBe("STATE_RUNNING");
  });
});

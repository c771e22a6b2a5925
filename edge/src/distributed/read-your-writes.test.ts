// Read-your-writes across services: a catalogue resource the catalogue acknowledged is usable by
// the very next call on the engine and sandbox services, which read the catalogue from copies
// that follow its event stream. Each round creates an image, template, profile, version or
// notebook image and at once creates a sandbox or an engine (validate-only) on it; no round may
// answer that the new resource does not exist. All in one process (the embedded defaults, or
// PostgreSQL + NATS when DATABASE_URL and NATS_URL are set), and on PostgreSQL + NATS with two
// replicas of each service behind one edge, which spreads the calls over the replicas.
// AIEM_RYW_ROUNDS sets the rounds of each (default 200).
import { randomBytes } from "node:crypto";
import { TEST_POLICY } from "@aiem/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createModuleFactories } from "../host/modules.js";
import { startTestHost, type TestHost } from "../testing/test-host.js";
import { createCluster, type Cluster } from "./cluster.js";
import { createRestClient, type RestClient } from "./rest-client.js";

const ROUNDS = Number(process.env.AIEM_RYW_ROUNDS ?? 200);
const ROUNDS_TIMEOUT_MS = 60_000 + ROUNDS * 1_000;
/** Clients each making rounds one after another; more than one, so calls overlap as users' do. */
const WORKERS = 4;
const databaseUrl = process.env.DATABASE_URL;
const natsUrl = process.env.NATS_URL;

const GLOBAL = "/v1/workspaces/global";
/** Sandboxes small enough that the host-wide storage bound never counts against the rounds. */
const SMALL = {
  milliCpuLimit: 100,
  memoryBytesLimit: String(128 << 20),
  storageBytes: String(64 << 20),
  maxIdleDuration: "3600s",
  enabled: true,
};
const SMALL_TEMPLATE = "workspaces/global/sandboxEngineTemplates/ryw-small";
const WORKSPACE = "/v1/workspaces/team-a";

interface Failure {
  readonly round: number;
  readonly step: string;
  readonly answer: string;
}

/** A catalogue resource made in the round, and the use of it that follows at once. */
type Round = (api: RestClient, id: string) => Promise<{ step: string; status: number; body: unknown } | undefined>;

/** Creates a sandbox on the given image and template, then deletes it. */
async function sandboxOn(api: RestClient, id: string, image: string, template: string) {
  const made = await api.call("POST", `${WORKSPACE}/sandboxEngines?sandboxEngineId=${id}`, {
    sandboxEngineImage: image,
    sandboxEngineTemplate: template,
  });
  if (made.status !== 200) return { step: "create sandbox", ...made };
  const gone = await api.call("DELETE", `/v1/${made.body.sandboxEngine.name}`);
  return gone.status === 200 ? undefined : { step: "delete sandbox", ...gone };
}

/** Checks (validate-only, so nothing runs) an engine of `kind` with the given profile and version or image. */
async function engineOn(api: RestClient, kind: "daiEngines" | "notebookEngines", id: string, body: object) {
  const idParam = kind === "daiEngines" ? "daiEngineId" : "notebookEngineId";
  const checked = await api.call("POST", `${WORKSPACE}/${kind}?${idParam}=${id}&validateOnly=true`, body);
  return checked.status === 200 ? undefined : { step: `validate ${kind}`, ...checked };
}

const ROUNDS_BY_KIND: ReadonlyArray<readonly [string, Round]> = [
  [
    "sandbox image",
    async (api, id) => {
      await api.ok("POST", `${GLOBAL}/sandboxEngineImages?sandboxEngineImageId=${id}`, {
        image: "docker.io/library/python:3.12-slim",
        enabled: true,
      });
      return sandboxOn(api, id, `workspaces/global/sandboxEngineImages/${id}`, SMALL_TEMPLATE);
    },
  ],
  [
    "sandbox template",
    async (api, id) => {
      await api.ok("POST", `${GLOBAL}/sandboxEngineTemplates?sandboxEngineTemplateId=${id}`, SMALL);
      return sandboxOn(
        api,
        id,
        "workspaces/global/sandboxEngineImages/default",
        `workspaces/global/sandboxEngineTemplates/${id}`,
      );
    },
  ],
  [
    "DAI profile",
    async (api, id) => {
      await api.ok("POST", `${GLOBAL}/daiEngineProfiles?daiEngineProfileId=${id}`, { enabled: true });
      return engineOn(api, "daiEngines", id, {
        profile: `workspaces/global/daiEngineProfiles/${id}`,
        daiEngineVersion: "workspaces/global/daiEngineVersions/1.11.0",
      });
    },
  ],
  [
    "DAI version",
    async (api, id) => {
      // Version ids are versions; the round's number keeps them apart.
      const version = `9.${Number.parseInt(id.slice(-6), 16)}.0`;
      await api.ok("POST", `${GLOBAL}/daiEngineVersions?daiEngineVersionId=${version}`, { image: "h2oai/dai:9" });
      return engineOn(api, "daiEngines", id, {
        profile: "workspaces/global/daiEngineProfiles/default",
        daiEngineVersion: `workspaces/global/daiEngineVersions/${version}`,
      });
    },
  ],
  [
    "notebook image",
    async (api, id) => {
      await api.ok("POST", `${GLOBAL}/notebookEngineImages?notebookEngineImageId=${id}`, {
        image: "quay.io/jupyter/minimal-notebook:latest",
        enabled: true,
      });
      return engineOn(api, "notebookEngines", id, {
        profile: "workspaces/global/notebookEngineProfiles/default",
        notebookImage: `workspaces/global/notebookEngineImages/${id}`,
      });
    },
  ],
];

/** Runs `rounds` rounds over `WORKERS` clients; returns every round whose use of the new resource failed. */
async function runRounds(api: RestClient, rounds: number): Promise<{ failures: Failure[]; ms: number }> {
  await api.call("POST", `${GLOBAL}/sandboxEngineTemplates?sandboxEngineTemplateId=ryw-small`, SMALL);
  const failures: Failure[] = [];
  const run = randomBytes(2).toString("hex");
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      for (let round = next++; round < rounds; round = next++) {
        const [, make] = ROUNDS_BY_KIND[round % ROUNDS_BY_KIND.length]!;
        const id = `ryw-${run}-${round.toString(16).padStart(6, "0")}`;
        const failed = await make(api, id);
        if (failed)
          failures.push({ round, step: failed.step, answer: `${failed.status} ${JSON.stringify(failed.body)}` });
      }
    }),
  );
  return { failures, ms: Date.now() - started };
}

function report(where: string, rounds: number, result: { failures: Failure[]; ms: number }): void {
  console.log(
    `read-your-writes, ${where}: ${rounds} rounds, ${result.failures.length} failed, ${result.ms} ms` +
      ` (${(result.ms / rounds).toFixed(1)} ms a round over ${WORKERS} clients)`,
  );
}

/** Runs the rounds against `api`, reports them as made `where`, and expects none to have failed. */
async function expectFreshReads(api: RestClient, where: string): Promise<void> {
  const result = await runRounds(api, ROUNDS);
  report(where, ROUNDS, result);
  expect(result.failures).toEqual([]);
}

describe("read-your-writes in one process", () => {
  let t: TestHost;
  let api: RestClient;

  beforeAll(async () => {
    t = await startTestHost({ modules: createModuleFactories(), policy: TEST_POLICY });
    api = createRestClient(t.url, await t.token("root", { admin: true }));
  }, 120_000);

  afterAll(async () => {
    await t?.stop();
  }, 120_000);

  it(
    "uses an image, template, profile, version or notebook image the call before created",
    () => expectFreshReads(api, databaseUrl && natsUrl ? "one process on PostgreSQL + NATS" : "one process, embedded"),
    ROUNDS_TIMEOUT_MS,
  );
});

describe.skipIf(!databaseUrl || !natsUrl)("read-your-writes across two replicas of each service", () => {
  let cluster: Cluster;
  let api: RestClient;

  beforeAll(async () => {
    cluster = await createCluster({ databaseUrl: databaseUrl!, natsUrl: natsUrl!, policy: TEST_POLICY });
    api = createRestClient(cluster.edge.url, await cluster.token("root", true));
  }, 240_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it(
    "uses an image, template, profile, version or notebook image the call before created, whichever replicas answer",
    () => expectFreshReads(api, "two replicas of each service on PostgreSQL + NATS"),
    ROUNDS_TIMEOUT_MS,
  );
});

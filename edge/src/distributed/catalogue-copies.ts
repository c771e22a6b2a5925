// Every replica's copy of the catalogue, after the faults: entries created are there, deleted ones
// gone. A copy is read through the create that checks against it: an engine create with
// validateOnly names the version; a sandbox create names the image with a template that does not
// exist, so it is refused either way and the field it is refused for tells whether the copy has
// the image.
import type { Cluster, Replica } from "./cluster.js";
import { WS } from "./fault-workload.js";
import { createRestClient, DAI_PROFILE, type Answer, type RestClient } from "./rest-client.js";

interface Probe {
  /** Whether the copy holds the entry; undefined when the answer does not tell. */
  readonly has: boolean | undefined;
  readonly answer: Answer;
}

interface CopyReader {
  /** The collection of the entries this part's copy is read for. */
  readonly kind: string;
  probe(direct: RestClient, name: string): Promise<Probe>;
}

async function probeEngineCopy(direct: RestClient, name: string): Promise<Probe> {
  const a = await direct.call("POST", `/v1/${WS}/daiEngines?daiEngineId=probe&validateOnly=true`, {
    profile: DAI_PROFILE,
    daiEngineVersion: name,
  });
  const has =
    a.status === 200 ? true : /^dai_engine_version .* not found$/.test(String(a.body?.message)) ? false : undefined;
  return { has, answer: a };
}

async function probeSandboxCopy(direct: RestClient, name: string): Promise<Probe> {
  const a = await direct.call("POST", `/v1/${WS}/sandboxEngines?sandboxEngineId=probe`, {
    sandboxEngineImage: name,
    sandboxEngineTemplate: `${WS}/sandboxEngineTemplates/absent`,
  });
  const message = String(a.body?.message);
  const has =
    a.status !== 400
      ? undefined
      : /sandbox_engine_template:/.test(message)
        ? true
        : /sandbox_engine_image: .* does not exist/.test(message)
          ? false
          : undefined;
  return { has, answer: a };
}

const COPIES: Partial<Record<Replica["part"], CopyReader>> = {
  engine: { kind: "/daiEngineVersions/", probe: probeEngineCopy },
  sandbox: { kind: "/sandboxEngineImages/", probe: probeSandboxCopy },
};

export interface CopyFindings {
  readonly catalogueMismatches: string[];
  /** Catalogue entries checked, summed over the replicas holding a copy. */
  catalogueChecks: number;
}

/** `catalogue` maps each entry's name to whether it should exist. */
export async function checkCatalogueCopies(
  cluster: Cluster,
  token: string,
  catalogue: ReadonlyMap<string, boolean>,
): Promise<CopyFindings> {
  const found: CopyFindings = { catalogueMismatches: [], catalogueChecks: 0 };
  for (const replica of cluster.replicas) {
    const copy = COPIES[replica.part];
    if (!copy) continue;
    const direct = createRestClient(replica.url, token);
    for (const [name, exists] of catalogue) {
      if (!name.includes(copy.kind)) continue;
      found.catalogueChecks++;
      const seen = await probeUntil(copy, direct, name, exists);
      if (seen.has !== exists)
        found.catalogueMismatches.push(
          `${replica.name}: ${name} ${exists ? "missing" : "still there"} (${seen.answer.status} ${String(seen.answer.body?.message ?? "").slice(0, 80)})`,
        );
    }
  }
  return found;
}

/** The copy follows the stream: give it the time a replay takes after the last fault. */
async function probeUntil(copy: CopyReader, direct: RestClient, name: string, exists: boolean): Promise<Probe> {
  let seen = await copy.probe(direct, name);
  for (const end = Date.now() + 30_000; seen.has !== exists && Date.now() < end; seen = await copy.probe(direct, name))
    await new Promise((r) => setTimeout(r, 250));
  return seen;
}

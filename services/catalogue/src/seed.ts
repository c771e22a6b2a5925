// The demo catalogue: one resource of each kind in `workspaces/global`, so that a newcomer can
// create an engine right after `npm start`. It is applied once per database (remembered in the
// `seeds` table), so a demo resource an administrator deletes stays deleted, and an id an
// administrator already took is left alone.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { DAIEngineProfileSchema } from "@aiem/proto/enginemanager/v1/dai_engine_profile_pb.js";
import { DAIEngineVersionSchema } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import { H2OEngineProfileSchema } from "@aiem/proto/enginemanager/v1/h2o_engine_profile_pb.js";
import { H2OEngineVersionSchema } from "@aiem/proto/enginemanager/v1/h2o_engine_version_pb.js";
import { ImagePullPolicy } from "@aiem/proto/enginemanager/v1/image_pull_policy_pb.js";
import { NotebookEngineImageSchema } from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import { NotebookEngineProfileSchema } from "@aiem/proto/enginemanager/v1/notebook_engine_profile_pb.js";
import { SandboxEngineImageSchema } from "@aiem/proto/enginemanager/v1/sandbox_engine_image_pb.js";
import { SandboxEngineTemplateSchema } from "@aiem/proto/enginemanager/v1/sandbox_engine_template_pb.js";
import { descriptorOf, type CatalogueResource, type KindDescriptor } from "./kinds.js";
import { enqueueChanged, insertResource, stampCreate, type Executor } from "./store.js";
import { Violations } from "./validation.js";

export const DEMO_SEED = "demo-catalogue-v1";
export const DEMO_WORKSPACE = "global";
/** Who the demo resources are recorded as created by. */
export const SYSTEM_PRINCIPAL = { name: "users/system", displayName: "AI Engine Manager" } as const;

const GiB = 1024n ** 3n;

export interface DemoItem {
  readonly d: KindDescriptor;
  readonly id: string;
  readonly resource: CatalogueResource;
  readonly aliases?: readonly string[];
}

/** The demo resources, freshly built (names, defaults and audit fields are set by seedDemo). */
export function demoCatalogue(): DemoItem[] {
  const items: Array<[KindDescriptor, string, CatalogueResource, string[]?]> = [
    [
      descriptorOf("daiEngineProfiles"),
      "default",
      create(DAIEngineProfileSchema, { displayName: "Default", priority: 0, enabled: true }),
    ],
    [
      descriptorOf("h2oEngineProfiles"),
      "default",
      create(H2OEngineProfileSchema, { displayName: "Default", priority: 0, enabled: true }),
    ],
    [
      descriptorOf("notebookEngineProfiles"),
      "default",
      create(NotebookEngineProfileSchema, { displayName: "Default", priority: 0, enabled: true }),
    ],
    [
      descriptorOf("daiEngineVersions"),
      "1.11.0",
      create(DAIEngineVersionSchema, { image: "h2oai/dai:1.11.0", imagePullPolicy: ImagePullPolicy.IF_NOT_PRESENT }),
      ["latest"],
    ],
    [
      descriptorOf("h2oEngineVersions"),
      "3.46.0",
      create(H2OEngineVersionSchema, {
        image: "h2oai/h2o-open-source-k8s:3.46.0",
        imagePullPolicy: ImagePullPolicy.IF_NOT_PRESENT,
      }),
      ["latest"],
    ],
    [
      descriptorOf("notebookEngineImages"),
      "default",
      create(NotebookEngineImageSchema, {
        displayName: "Jupyter (Python 3)",
        image: "quay.io/jupyter/minimal-notebook:latest",
        enabled: true,
        imagePullPolicy: ImagePullPolicy.IF_NOT_PRESENT,
      }),
    ],
    [
      descriptorOf("sandboxEngineImages"),
      "default",
      create(SandboxEngineImageSchema, {
        displayName: "Python 3",
        image: "docker.io/library/python:3.12-slim",
        enabled: true,
        imagePullPolicy: ImagePullPolicy.IF_NOT_PRESENT,
      }),
    ],
    [
      descriptorOf("sandboxEngineTemplates"),
      "default",
      create(SandboxEngineTemplateSchema, {
        displayName: "Small (1 core, 2 GiB)",
        milliCpuLimit: 1000,
        memoryBytesLimit: 2n * GiB,
        storageBytes: 10n * GiB,
        enabled: true,
        maxIdleDuration: create(DurationSchema, { seconds: 3600n }),
      }),
    ],
  ];
  return items.map(([d, id, resource, aliases]) => ({ d, id, resource, aliases }));
}

/**
 * Applies the demo catalogue unless this database has had it before. Returns true when it was
 * applied now. Runs in the caller's transaction, events included.
 */
export async function seedDemo(trx: Executor, now: Date): Promise<boolean> {
  const marked = await trx
    .insertInto("seeds")
    .values({ name: DEMO_SEED })
    .onConflict((oc) => oc.doNothing())
    .returning("name")
    .executeTakeFirst();
  if (!marked) return false;
  for (const { d, id, resource, aliases } of demoCatalogue()) {
    resource.name = d.pattern.format({ workspace: DEMO_WORKSPACE, [d.idVar]: id });
    (d.prepare as ((r: CatalogueResource) => void) | undefined)?.(resource);
    const v = new Violations(d.resourceField);
    (d.validate as (r: CatalogueResource, v: Violations) => void)(resource, v);
    v.throwIfAny();
    stampCreate(resource, SYSTEM_PRINCIPAL, now);
    if (aliases?.length) {
      // An alias an administrator already gave another version stays where it is.
      const free: string[] = [];
      for (const alias of aliases) {
        const taken = await trx
          .selectFrom("version_aliases")
          .select("alias")
          .where("kind", "=", d.kind)
          .where("workspace", "=", DEMO_WORKSPACE)
          .where("alias", "=", alias)
          .executeTakeFirst();
        if (!taken) free.push(alias);
      }
      (resource as CatalogueResource & { aliases: string[] }).aliases = free;
    }
    if (!(await insertResource(trx, d, DEMO_WORKSPACE, id, resource))) continue;
    const assigned = (resource as { aliases?: string[] }).aliases ?? [];
    if (assigned.length > 0) {
      await trx
        .insertInto("version_aliases")
        .values(assigned.map((alias) => ({ kind: d.kind, workspace: DEMO_WORKSPACE, alias, version_id: id })))
        .execute();
    }
    await enqueueChanged(trx, d, DEMO_WORKSPACE, id, resource, now);
  }
  return true;
}

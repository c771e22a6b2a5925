// CreateSandboxEngine: the request checked, its image and template taken from the local copy of
// the catalogue, then the sandbox recorded STARTING (or RUNNING at once, from a warm sandbox)
// with its event, and the start left to the lifecycle.
import { randomUUID } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { DurationSchema, durationMs, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  checkAnnotations,
  checkField,
  sandboxEngineImagePattern,
  sandboxEngineTemplatePattern,
  sandboxEnginePattern,
  validateDisplayName,
  validateResourceId,
  workspacePattern,
} from "@aiem/kit/aip";
import { Action, WorkspaceKind } from "@aiem/kit/authz";
import { alreadyExists, failedPrecondition, requiredField, unavailable } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import { principalOf } from "@aiem/kit/server";
import { caughtUpFirst, DEFAULT_SANDBOX_MAX_RUNNING_SECONDS } from "@aiem/kit/catalogue-view";
import {
  type SandboxEngine,
  SandboxEngineImageInfoSchema,
  SandboxEngineSchema,
  SandboxEngineTemplateInfoSchema,
  SandboxEngine_State,
} from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_pb.js";
import type { CreateSandboxEngineRequest } from "@aiem/proto/enginemanager/sandbox/v1/sandbox_engine_service_pb.js";
import {
  type SandboxEngineImage,
  SandboxEngineImageSchema,
} from "@aiem/proto/enginemanager/v1/sandbox_engine_image_pb.js";
import {
  type SandboxEngineTemplate,
  SandboxEngineTemplateSchema,
} from "@aiem/proto/enginemanager/v1/sandbox_engine_template_pb.js";
import { SANDBOX_RESOURCE_TYPE } from "./access.js";
import { limitsOf } from "./lifecycle.js";
import { SandboxRuntimeError } from "./runtime/index.js";
import { startStep } from "./runtime/start-steps.js";
import type { SandboxEngineDeps, SandboxEngineServiceImpl } from "./sandbox-engine-handlers.js";
import { encodeSandbox, insertSandbox, sandboxStateName, type SandboxRow } from "./store.js";

const S = SandboxEngine_State;

export function createCreateSandboxEngineHandler(
  deps: SandboxEngineDeps,
  present: (row: SandboxRow) => SandboxEngine,
): Pick<SandboxEngineServiceImpl, "createSandboxEngine"> {
  const { context, lifecycle } = deps;
  return {
    async createSandboxEngine(req, ctx) {
      const entered = performance.now();
      const { workspace } = workspacePattern.parse(req.parent, "parent");
      const principal = principalOf(ctx);
      context.policy.check(principal, Action.CREATE, WorkspaceKind.sandboxEngines, workspace);
      const input = checkCreateRequest(req);
      if (deps.runtime.capabilities.isolation === "unavailable") {
        throw failedPrecondition(
          `sandboxes cannot be isolated on this server: ${deps.runtime.capabilities.isolationUnavailableReason}. ` +
            "An operator who accepts running sandboxes without any isolation can set AIEM_SANDBOX_UNCONFINED=true.",
          { type: "ISOLATION", subject: "bubblewrap", description: "bwrap is not installed" },
        );
      }
      // A reference the catalogue acknowledged before this call is never answered as missing:
      // when one is, the copy catches up with the catalogue stream and looks again.
      const { image, template } = await caughtUpFirst(deps.catalogue(), () => ({
        image: catalogueEntry(
          deps,
          "sandboxEngineImages",
          "sandbox_engine.sandbox_engine_image",
          input.sandboxEngineImage,
        ),
        template: catalogueEntry(
          deps,
          "sandboxEngineTemplates",
          "sandbox_engine.sandbox_engine_template",
          input.sandboxEngineTemplate,
        ),
      }));
      const now = context.now();
      const name = sandboxEnginePattern.format({ workspace, sandbox_engine: req.sandboxEngineId });
      const engine = newSandboxEngine(name, input, principal, image, template, now);
      startStep(engine.uid, "handler", entered);
      startStep(engine.uid, "checked");
      const templateInfo = engine.sandboxEngineTemplateInfo!;
      const runtimeId = lifecycle.claimRuntimeId(engine.uid, limitsOf(templateInfo));
      // A warm sandbox's agent already answers: the sandbox is recorded RUNNING at once (its
      // events still tell STARTING, then RUNNING), so the create itself hands it out.
      const warm = runtimeId !== engine.uid && deps.runtime.isRunning(runtimeId);
      // A new sandbox must fit the host-wide bounds (a warm one holds its share already).
      if (!warm) checkCapacity(deps, engine);
      // This replica runs it: the warm agent it may have claimed is here, and so is the kick below.
      const placement = lifecycle.placement;
      const row = newSandboxRow({
        workspace,
        id: req.sandboxEngineId,
        engine,
        template,
        runtimeId,
        warm,
        placement,
        now,
      });
      await recordNewSandbox(deps, row, engine, warm);
      // After the answer is on its way: the pass that takes the start over (or, from a warm
      // sandbox, finds nothing left to do).
      startStep(row.uid, "recorded");
      setImmediate(() => void lifecycle.kick(row.uid));
      // The answer to a create says STARTING, as the real service's does, even from a warm
      // sandbox that is running already: clients wait for RUNNING, and the next read says it.
      return {
        sandboxEngine: warm ? present({ ...row, state: sandboxStateName(S.STARTING) }) : present(row),
      };
    },
  };
}

/** The request's own fields checked; the sandbox engine it asks for. */
function checkCreateRequest(req: CreateSandboxEngineRequest): SandboxEngine {
  if (req.sandboxEngineId === "") throw requiredField("sandbox_engine_id");
  checkField("sandbox_engine_id", req.sandboxEngineId, validateResourceId);
  const input = req.sandboxEngine;
  if (!input) throw requiredField("sandbox_engine");
  checkField("sandbox_engine.display_name", input.displayName, validateDisplayName);
  checkAnnotations("sandbox_engine.annotations", input.annotations);
  for (const [field, value, pattern] of [
    ["sandbox_engine.sandbox_engine_image", input.sandboxEngineImage, sandboxEngineImagePattern],
    ["sandbox_engine.sandbox_engine_template", input.sandboxEngineTemplate, sandboxEngineTemplatePattern],
  ] as const) {
    if (value === "") throw requiredField(field);
    pattern.parse(value, field);
  }
  return input;
}

/** An enabled image or template of the local copy of the catalogue, or the error naming `field`. */
function catalogueEntry<K extends "sandboxEngineImages" | "sandboxEngineTemplates">(
  deps: SandboxEngineDeps,
  kind: K,
  field: string,
  name: string,
) {
  const catalogue = deps.catalogue();
  if (!catalogue?.isReady()) throw unavailable("the sandbox service is still reading the catalogue; retry shortly");
  const resource = catalogue.get(kind, name);
  const what = kind === "sandboxEngineImages" ? "image" : "template";
  if (!resource) {
    throw failedPrecondition(`${field}: the sandbox engine ${what} ${name} does not exist`, {
      type: "NOT_FOUND",
      subject: name,
      description: `no such ${what}`,
    });
  }
  if (!resource.enabled) {
    throw failedPrecondition(`${field}: the sandbox engine ${what} ${name} is disabled`, {
      type: "DISABLED",
      subject: name,
      description: `the ${what} is disabled`,
    });
  }
  return resource;
}

/** The new sandbox engine resource, with copies of its image and template as they are now. */
function newSandboxEngine(
  name: string,
  input: SandboxEngine,
  principal: Principal,
  image: SandboxEngineImage,
  template: SandboxEngineTemplate,
  now: Date,
): SandboxEngine {
  // Field numbers of the infos match the catalogue's messages: the copy is the resource itself.
  const imageInfo = fromBinary(SandboxEngineImageInfoSchema, toBinary(SandboxEngineImageSchema, image));
  const templateInfo = fromBinary(SandboxEngineTemplateInfoSchema, toBinary(SandboxEngineTemplateSchema, template));
  // A template from an event older than its running limit has the catalogue's default.
  templateInfo.maxRunningDuration ??= create(DurationSchema, { seconds: DEFAULT_SANDBOX_MAX_RUNNING_SECONDS });
  return create(SandboxEngineSchema, {
    name,
    displayName: input.displayName,
    uid: randomUUID(),
    creator: principal.name,
    creatorDisplayName: principal.displayName,
    createTime: timestampFromDate(now),
    sandboxEngineImage: image.name,
    sandboxEngineImageInfo: imageInfo,
    sandboxEngineTemplate: template.name,
    sandboxEngineTemplateInfo: templateInfo,
    annotations: input.annotations,
  });
}

/** RESOURCE_EXHAUSTED when a new sandbox would not fit the host-wide bounds. */
function checkCapacity(deps: SandboxEngineDeps, engine: SandboxEngine): void {
  try {
    deps.runtime.checkCapacity(limitsOf(engine.sandboxEngineTemplateInfo!));
  } catch (error) {
    if (error instanceof SandboxRuntimeError && error.code === "resource-exhausted") {
      throw new ConnectError(error.message, Code.ResourceExhausted);
    }
    throw error;
  }
}

/** The row of a new sandbox: RUNNING at once from a warm sandbox, otherwise STARTING. */
function newSandboxRow(fields: {
  workspace: string;
  id: string;
  engine: SandboxEngine;
  template: SandboxEngineTemplate;
  runtimeId: string;
  warm: boolean;
  placement: string;
  now: Date;
}): SandboxRow {
  const { workspace, id, engine, template, runtimeId, warm, placement, now } = fields;
  return {
    workspace,
    id,
    name: engine.name,
    uid: engine.uid,
    display_name: engine.displayName,
    state: sandboxStateName(warm ? S.RUNNING : S.STARTING),
    desired: "running",
    creator: engine.creator,
    creator_display_name: engine.creatorDisplayName,
    sandbox_engine_image: engine.sandboxEngineImage,
    sandbox_engine_template: engine.sandboxEngineTemplate,
    runtime_id: runtimeId,
    max_idle_ms: BigInt(template.maxIdleDuration ? durationMs(template.maxIdleDuration) : 0),
    max_running_ms: BigInt(durationMs(engine.sandboxEngineTemplateInfo!.maxRunningDuration!)),
    create_time: now,
    update_time: now,
    last_activity: now,
    start_time: warm ? now : null,
    failure_reason: null,
    placement,
    seen_running: false,
    resource: encodeSandbox(engine),
  };
}

/**
 * Writes the new sandbox's row and its events. A cold start begins before the row is written:
 * the write, the answer and the pass that records it running overlap the agent's start (which
 * the pass then takes over). A taken name gives back what was claimed or started for it.
 */
async function recordNewSandbox(
  deps: SandboxEngineDeps,
  row: SandboxRow,
  engine: SandboxEngine,
  warm: boolean,
): Promise<void> {
  const { context, lifecycle } = deps;
  const runtimeId = row.runtime_id;
  if (!warm) await lifecycle.startEarly(row.uid, runtimeId, limitsOf(engine.sandboxEngineTemplateInfo!));
  startStep(row.uid, "early-started");
  let inserted: boolean;
  try {
    inserted = await context.write((trx) =>
      insertSandbox(trx, row, warm ? [S.STARTING, S.RUNNING] : [S.STARTING], row.create_time),
    );
  } catch (error) {
    lifecycle.discardEarly(row.uid, runtimeId);
    throw error;
  }
  if (!inserted) {
    if (warm) void deps.runtime.destroy(runtimeId).catch(() => undefined);
    else lifecycle.discardEarly(row.uid, runtimeId);
    throw alreadyExists(row.name, SANDBOX_RESOURCE_TYPE);
  }
}

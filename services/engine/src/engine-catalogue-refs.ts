// The catalogue references a request names (a profile, a version or notebook image), checked to be
// usable by the caller, and the engine's profile as it stands now.
import { fromBinary } from "@bufbuild/protobuf";
import {
  daiEngineProfilePattern,
  daiEngineVersionPattern,
  h2oEngineProfilePattern,
  h2oEngineVersionPattern,
  notebookEngineImagePattern,
  notebookEngineProfilePattern,
  type ResourcePattern,
} from "@aiem/kit/aip";
import { caughtUpFirst, isProfileAssignedTo } from "@aiem/kit/catalogue-view";
import { invalidArgument, invalidArgumentWorded, quote, requiredField } from "@aiem/kit/errors";
import type { Principal } from "@aiem/kit/identity";
import type { DAIEngineVersion } from "@aiem/proto/enginemanager/v1/dai_engine_version_pb.js";
import type { NotebookEngineImage } from "@aiem/proto/enginemanager/v1/notebook_engine_image_pb.js";
import type { ServiceContext } from "./context.js";
import type { AnyEngine, EngineKind } from "./kinds.js";
import type { EngineRow } from "./store.js";
import type { AnyProfile } from "./validation.js";

const PROFILE_PATTERNS: Record<EngineKind["type"], ResourcePattern<string>> = {
  daiEngines: daiEngineProfilePattern,
  h2oEngines: h2oEngineProfilePattern,
  notebookEngines: notebookEngineProfilePattern,
};
const VERSION_PATTERNS: Record<EngineKind["type"], ResourcePattern<string>> = {
  daiEngines: daiEngineVersionPattern,
  h2oEngines: h2oEngineVersionPattern,
  notebookEngines: notebookEngineImagePattern,
};

export type VersionLike = DAIEngineVersion | NotebookEngineImage;

/** A stored engine resource, read by the field names its kind descriptor holds. */
// biome-ignore lint/suspicious/noExplicitAny: an engine of any kind, its fields read by name from the kind descriptor
export type StoredEngine = AnyEngine & Record<string, any>;

/** The profile named in a request: it must exist, be enabled and be assigned to the caller. */
export function usableProfile(
  context: ServiceContext,
  kind: EngineKind,
  principal: Principal,
  name: string,
): AnyProfile {
  const field = `${kind.resourceField}.profile`;
  if (name === "") throw requiredField(field);
  PROFILE_PATTERNS[kind.type].parse(name, field);
  const profile = context.catalogue().get(kind.profileKind, name) as AnyProfile | undefined;
  // "<kind> <name> not found" is how the real service words it; clients compare the text.
  if (!profile) throw invalidArgument(field, `${singularOf(kind.profileKind)} ${name} not found`);
  if (!profile.enabled) throw invalidArgument(field, `${quote(name)} is disabled; choose an enabled profile`);
  // A profile assigned to roles the caller holds none of is hidden from them (the catalogue
  // answers 404), so it is named exactly as one that does not exist.
  if (!isProfileAssignedTo(profile, principal.roles))
    throw invalidArgument(field, `${singularOf(kind.profileKind)} ${name} not found`);
  return profile;
}

/**
 * The version (an alias resolved) or notebook image named in a request, usable for new engines.
 * `missing` is how the call words one the catalogue does not hold, as the real service does
 * (clients compare the text); by default "<field> <name> not found", as its create calls say.
 */
export function usableVersion(
  context: ServiceContext,
  kind: EngineKind,
  name: string,
  field: string,
  missing: (name: string) => string = (missingName) => missingVersion(kind, missingName),
): VersionLike {
  if (name === "") throw requiredField(field);
  VERSION_PATTERNS[kind.type].parse(name, field);
  const found = context.catalogue().get(kind.versionKind, name) as VersionLike | undefined;
  if (!found) throw invalidArgumentWorded(field, missing(name));
  if (kind.versionKind === "notebookEngineImages") {
    if (!(found as NotebookEngineImage).enabled)
      throw invalidArgument(field, `${quote(found.name)} is disabled; choose an enabled image`);
  } else if ((found as DAIEngineVersion).deprecated) {
    throw invalidArgument(field, `${quote(found.name)} is deprecated; choose a version that is not`);
  }
  return found;
}

function missingVersion(kind: EngineKind, name: string): string {
  return `${kind.type === "notebookEngines" ? "notebookImage" : kind.versionField} ${name} not found`;
}

/**
 * `lookup`'s result, where `lookup` reads catalogue references from the local copy: when it
 * throws, the copy first catches up with the catalogue stream and it runs again, so a reference
 * the catalogue acknowledged before this call is never answered as missing or unusable.
 */
export function withCatalogue<T>(context: ServiceContext, lookup: () => T): Promise<T> {
  let view: ReturnType<ServiceContext["catalogue"]> | undefined;
  try {
    view = context.catalogue();
  } catch {
    view = undefined;
  }
  return caughtUpFirst(view, lookup);
}

/**
 * Lets the copy catch up when `lookup` fails, and nothing more: for checks that run later inside
 * a transaction, which should not wait there, and answer for themselves.
 */
export async function catchUpFor(context: ServiceContext, lookup: () => unknown): Promise<void> {
  // The check that runs later inside the transaction answers the failure itself.
  await withCatalogue(context, lookup).catch(() => {});
}

/** The engine's profile now: from the catalogue when it still exists, else the copy the engine keeps. */
export function currentProfile(context: ServiceContext, kind: EngineKind, row: EngineRow): AnyProfile | undefined {
  const fromCatalogue = context.catalogue().get(kind.profileKind, row.profile) as AnyProfile | undefined;
  return fromCatalogue ?? (decodeStored(kind, row) as { profileInfo?: AnyProfile }).profileInfo;
}

/** The stored resource: what the row's columns do not hold (copies, config, annotations). */
export function decodeStored(kind: EngineKind, row: EngineRow): StoredEngine {
  return fromBinary(kind.schema, row.resource) as StoredEngine;
}

/** `daiEngineProfiles` → `daiEngineProfile`: a catalogue kind as one of its resources is called. */
function singularOf(collection: string): string {
  return collection.endsWith("s") ? collection.slice(0, -1) : collection;
}

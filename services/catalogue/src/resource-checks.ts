// What a written resource must pass: the kind's defaults and validation, and the update mask's
// rules (its section 5 paths; immutable and output-only fields named as such).
import { checkUpdateMask } from "@aiem/kit/aip";
import { invalidArgument, quote } from "@aiem/kit/errors";
import { FieldBehavior } from "@aiem/proto/google/api/field_behavior_pb.js";
import type { CatalogueResource, KindDescriptor } from "./kinds.js";
import { fieldsWith } from "./store.js";
import { Violations } from "./validation.js";

export function validateResource(d: KindDescriptor, r: CatalogueResource, more?: (v: Violations) => void): void {
  const v = new Violations(d.resourceField);
  (d.validate as (r: CatalogueResource, v: Violations) => void)(r, v);
  more?.(v);
  v.throwIfAny();
}

export function prepare(d: KindDescriptor, r: CatalogueResource): void {
  (d.prepare as ((r: CatalogueResource) => void) | undefined)?.(r);
}

function maskRules(d: KindDescriptor) {
  const immutable = [
    ...fieldsWith(d.schema, FieldBehavior.IMMUTABLE),
    ...fieldsWith(d.schema, FieldBehavior.IDENTIFIER),
  ];
  const outputOnly = fieldsWith(d.schema, FieldBehavior.OUTPUT_ONLY);
  return { allowed: d.updatable, immutable, outputOnly };
}

/** The paths an update may change, or INVALID_ARGUMENT naming the first it may not. */
export function checkMask(d: KindDescriptor, paths: readonly string[] | undefined): string[] {
  const rules = maskRules(d);
  for (const path of paths ?? []) {
    if (d.family === "version" && path === "aliases") {
      throw invalidArgument("update_mask", `${quote(path)} is set on create or through :assignAliases`);
    }
    if (rules.outputOnly.includes(path)) {
      throw invalidArgument("update_mask", `${quote(path)} is set by the server and cannot be updated`);
    }
  }
  return checkUpdateMask(paths, { allowed: rules.allowed, immutable: rules.immutable });
}

// What the catalogue means where an administrator left a field unset. The catalogue fills these in
// on write; services that follow it apply them too, to resources from events older than a default.
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  ProfileConstraintDurationSchema,
  ProfileConstraintNumericSchema,
  type ProfileConstraintDuration,
  type ProfileConstraintNumeric,
} from "@aiem/proto/enginemanager/v1/profile_constraint_pb.js";

const GiB = 1024n ** 3n;

const numeric = (min: bigint, def: bigint): ProfileConstraintNumeric =>
  create(ProfileConstraintNumericSchema, { min, default: def });
const seconds = (s: number) => create(DurationSchema, { seconds: BigInt(s) });
const duration = (min: number, def: number): ProfileConstraintDuration =>
  create(ProfileConstraintDurationSchema, { min: seconds(min), default: seconds(def) });

/** What an unset profile constraint means (docs/adr/0013, stated in the field comments). */
export const DEFAULT_CONSTRAINTS = {
  cpu: () => numeric(1n, 1n),
  gpu: () => numeric(0n, 0n),
  memoryBytes: () => numeric(GiB, 4n * GiB),
  storageBytes: () => numeric(GiB, 16n * GiB),
  nodeCount: () => numeric(1n, 1n),
  maxIdleDuration: () => duration(0, 3600),
  maxRunningDuration: () => duration(0, 8 * 3600),
} as const;

/** The running limit of a sandbox engine template without one: 8 hours, as engine profiles default to. */
export const DEFAULT_SANDBOX_MAX_RUNNING_SECONDS = 8n * 3600n;

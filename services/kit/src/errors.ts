// Builders for the errors services return. Every API error is a ConnectError with the gRPC code of
// the failure and a message that says what was wrong and, where a request field is at fault, names
// that field first ("filter: unknown field ..."), so REST, Connect and gRPC clients all see the same
// text. Machine-readable google.rpc details ride along for clients that want them.
import { Code, ConnectError } from "@connectrpc/connect";
import {
  BadRequestSchema,
  PreconditionFailureSchema,
  ResourceInfoSchema,
} from "@aiem/proto/google/rpc/error_details_pb.js";

export { Code, ConnectError };

/** One wrong request field: its snake_case path (`dai_engine.display_name`) and what is wrong. */
export interface FieldViolation {
  readonly field: string;
  readonly description: string;
}

/** INVALID_ARGUMENT for one field; the message reads `<field>: <description>`. */
export function invalidArgument(field: string, description: string): ConnectError {
  return invalidArguments([{ field, description }]);
}

/**
 * INVALID_ARGUMENT for several fields at once, so a client can fix a form in one round trip.
 * The message lists every violation, separated by "; ".
 */
export function invalidArguments(violations: readonly FieldViolation[]): ConnectError {
  if (violations.length === 0) throw new Error("invalidArguments needs at least one violation");
  const message = violations.map((v) => (v.field ? `${v.field}: ${v.description}` : v.description)).join("; ");
  return new ConnectError(message, Code.InvalidArgument, undefined, [
    {
      desc: BadRequestSchema,
      value: { fieldViolations: violations.map((v) => ({ field: v.field, description: v.description })) },
    },
  ]);
}

/**
 * INVALID_ARGUMENT for one field whose message is exactly `message`, without the field in front:
 * for texts clients of the real service compare whole. The field still rides in the details.
 */
export function invalidArgumentWorded(field: string, message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: { fieldViolations: [{ field, description: message }] } },
  ]);
}

/** INVALID_ARGUMENT for a required field left empty. */
export function requiredField(field: string): ConnectError {
  return invalidArgument(field, "is required");
}

/** OUT_OF_RANGE for a value that is well-formed but past the end of what exists. */
export function outOfRange(field: string, description: string): ConnectError {
  return new ConnectError(`${field}: ${description}`, Code.OutOfRange, undefined, [
    { desc: BadRequestSchema, value: { fieldViolations: [{ field, description }] } },
  ]);
}

/** NOT_FOUND for a resource name. `resourceType` is the kind, e.g. `enginemanager.ai/DAIEngine`. */
export function notFound(name: string, resourceType = ""): ConnectError {
  return new ConnectError(`${quote(name)} not found`, Code.NotFound, undefined, [
    { desc: ResourceInfoSchema, value: { resourceName: name, resourceType, description: "not found" } },
  ]);
}

/** ALREADY_EXISTS for a resource name (create with an id that is taken). */
export function alreadyExists(name: string, resourceType = ""): ConnectError {
  return new ConnectError(`${quote(name)} already exists`, Code.AlreadyExists, undefined, [
    { desc: ResourceInfoSchema, value: { resourceName: name, resourceType, description: "already exists" } },
  ]);
}

/** One unmet precondition: a short type (`STATE`), the subject it is about, and what is wrong. */
export interface PreconditionViolation {
  readonly type: string;
  readonly subject: string;
  readonly description: string;
}

/**
 * FAILED_PRECONDITION: the request is valid but the system is not in a state that allows it
 * (resume an engine that is running, use a disabled image). Retrying unchanged will fail again.
 */
export function failedPrecondition(description: string, violation?: PreconditionViolation): ConnectError {
  return new ConnectError(
    description,
    Code.FailedPrecondition,
    undefined,
    violation ? [{ desc: PreconditionFailureSchema, value: { violations: [violation] } }] : undefined,
  );
}

/** PERMISSION_DENIED; say which permission is missing on what, never whether the resource exists. */
export function permissionDenied(description: string): ConnectError {
  return new ConnectError(description, Code.PermissionDenied);
}

/** UNAUTHENTICATED: no credentials, or credentials that could not be verified. */
export function unauthenticated(description = "a valid bearer token is required"): ConnectError {
  return new ConnectError(description, Code.Unauthenticated);
}

/** ABORTED: a concurrency conflict (optimistic update lost a race); the client may retry. */
export function aborted(description: string): ConnectError {
  return new ConnectError(description, Code.Aborted);
}

/** RESOURCE_EXHAUSTED: a quota or limit (running engines per user, output buffer) is used up. */
export function resourceExhausted(description: string): ConnectError {
  return new ConnectError(description, Code.ResourceExhausted);
}

/** UNAVAILABLE: a dependency is down; the client may retry with backoff. */
export function unavailable(description: string): ConnectError {
  return new ConnectError(description, Code.Unavailable);
}

/** UNIMPLEMENTED: the call exists in the API but not in this deployment (e.g. a runtime). */
export function unimplemented(description: string): ConnectError {
  return new ConnectError(description, Code.Unimplemented);
}

/** DEADLINE_EXCEEDED: the work did not finish in the time allowed. */
export function deadlineExceeded(description: string): ConnectError {
  return new ConnectError(description, Code.DeadlineExceeded);
}

/**
 * INTERNAL: a bug or broken invariant. The description goes to clients, so keep details (SQL,
 * stack traces, secrets) out of it and log them instead; `cause` is kept on the error for logs.
 */
export function internalError(description = "internal error", cause?: unknown): ConnectError {
  return new ConnectError(description, Code.Internal, undefined, undefined, cause);
}

/** True when `err` is a ConnectError with the given code. */
export function hasCode(err: unknown, code: Code): err is ConnectError {
  return err instanceof ConnectError && err.code === code;
}

/**
 * Quotes a client-supplied value for an error message: JSON string syntax so control characters
 * and quotes cannot forge message structure, cut short so a huge value cannot bloat the response.
 */
export function quote(value: string, max = 80): string {
  const cut = value.length > max ? `${value.slice(0, max)}...` : value;
  return JSON.stringify(cut);
}

const HTTP_STATUS_OF_CODE: Record<Code, number> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** The HTTP status a REST answer carries for a code (google.api's mapping; 499 for a cancelled call). */
export function httpStatusOf(code: Code): number {
  return HTTP_STATUS_OF_CODE[code] ?? 500;
}

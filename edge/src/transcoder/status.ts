// google.rpc.Status JSON bodies and the HTTP status of each gRPC code, for everything the REST
// side answers with an error, whether it came from a service or from the transcoder itself.
import { create, fromBinary, toJson, type JsonObject, type Registry } from "@bufbuild/protobuf";
import { base64Encode } from "@bufbuild/protobuf/wire";
import { Code, ConnectError } from "@connectrpc/connect";
import { BadRequestSchema } from "@aiem/proto/google/rpc/error_details_pb.js";

export { httpStatusOf } from "@aiem/kit/errors";

const typePrefix = "type.googleapis.com/";

/** The google.rpc.Status JSON of an error; `details` are Any JSON objects with `@type`. */
export function statusJson(error: ConnectError, registry: Registry | undefined): JsonObject {
  const details: JsonObject[] = [];
  for (const detail of error.details) {
    if ("desc" in detail) {
      const json = toJson(detail.desc, create(detail.desc, detail.value), { registry });
      details.push(withType(detail.desc.typeName, json));
      continue;
    }
    // Details that crossed the wire arrive as bytes; render them when the type is known.
    const desc = registry?.getMessage(detail.type);
    if (desc) {
      try {
        details.push(withType(detail.type, toJson(desc, fromBinary(desc, detail.value), { registry })));
        continue;
      } catch {
        // fall through to the opaque form
      }
    }
    details.push({ "@type": typePrefix + detail.type, value: base64Encode(detail.value) });
  }
  return { code: error.code, message: error.rawMessage, details };
}

function withType(typeName: string, json: unknown): JsonObject {
  const type = { "@type": typePrefix + typeName };
  // Well-known types with a non-object JSON form go under "value", as the Any JSON mapping says.
  if (json === null || typeof json !== "object" || Array.isArray(json)) return { ...type, value: json as never };
  return { ...type, ...(json as JsonObject) };
}

export interface Violation {
  /** The request field or query parameter at fault, as the caller wrote it; "" for the request as a whole. */
  readonly field: string;
  readonly description: string;
}

/** INVALID_ARGUMENT naming the request field at fault, with a BadRequest detail. */
export function badRequest(field: string, description: string): ConnectError {
  return badRequests([{ field, description }]);
}

/** INVALID_ARGUMENT for several faults at once; the message lists them all. */
export function badRequests(violations: readonly Violation[]): ConnectError {
  const message = violations.map((v) => (v.field ? `${v.field}: ${v.description}` : v.description)).join("; ");
  return new ConnectError(message, Code.InvalidArgument, undefined, [
    { desc: BadRequestSchema, value: { fieldViolations: violations.map((v) => ({ ...v })) } },
  ]);
}

/** A transcoder-level failure with an HTTP status that the gRPC mapping has no code for. */
export class HttpError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly error: ConnectError,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(error.message);
  }
}

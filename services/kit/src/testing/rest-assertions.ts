// REST calls and their assertions for the suites that drive the product through its HTTP API:
// one request helper, the HTTP status and Status code of each error code, and expectError.
import { expect } from "vitest";

/**
 * A REST answer's JSON as a test reads it: field by field, with the test's assertions as its
 * type check. Typing each answer by its message would repeat the API's schema in every test.
 */
// biome-ignore lint/suspicious/noExplicitAny: tests read JSON answers by field and assert on them
export type RestJson = any;

export interface Reply {
  readonly status: number;
  /** The JSON answer; undefined when the body is empty or not JSON. */
  readonly body: RestJson;
  readonly text: string;
  readonly headers: Headers;
}

export interface RestCallOptions {
  /** A bearer token; anonymous without. */
  readonly token?: string;
  /** Sent as JSON. */
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  readonly redirect?: "follow" | "manual" | "error";
}

/** One REST call against `baseUrl`: JSON in and out, the body kept as text too. */
export async function restCall(
  baseUrl: string,
  method: string,
  path: string,
  options: RestCallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    ...(options.redirect ? { redirect: options.redirect } : {}),
  });
  return replyOf(res);
}

/** A fetch response read whole: its JSON, or undefined when the body is empty or not JSON. */
export async function replyOf(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: RestJson;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, text, body, headers: res.headers };
}

/** The HTTP status and the Status code (google.rpc.Code) of each error, as the REST gateway maps them. */
export const CODES = {
  CANCELLED: [499, 1],
  INVALID_ARGUMENT: [400, 3],
  DEADLINE_EXCEEDED: [504, 4],
  NOT_FOUND: [404, 5],
  ALREADY_EXISTS: [409, 6],
  PERMISSION_DENIED: [403, 7],
  RESOURCE_EXHAUSTED: [429, 8],
  FAILED_PRECONDITION: [400, 9],
  ABORTED: [409, 10],
  OUT_OF_RANGE: [400, 11],
  UNIMPLEMENTED: [501, 12],
  INTERNAL: [500, 13],
  UNAVAILABLE: [503, 14],
  UNAUTHENTICATED: [401, 16],
} as const;

export type ErrorCode = keyof typeof CODES;

/** The body of a 200 answer; fails the test with the answer otherwise. */
export function ok(r: Reply): RestJson {
  expect(r.status, r.text).toBe(200);
  return r.body;
}

/** The resource of a single-resource answer (`{"daiEngine": {...}}`). */
export function resourceOf(r: Reply): RestJson {
  return Object.values(ok(r) as object)[0];
}

const FIELD_PATH = /^[A-Za-z_.[\]"0-9-]+$/;

/**
 * Checks the HTTP status and the Status code of an error answer, and then, for INVALID_ARGUMENT
 * with a field path, that a violation names it (`field: ...` in the message, and a field
 * violation in the details when there are any); otherwise that the message contains `text`.
 */
export function expectError(r: Reply, code: ErrorCode, fieldOrText?: string): void {
  const [http, grpc] = CODES[code];
  expect(r.status, r.text).toBe(http);
  expect(r.body?.code, r.text).toBe(grpc);
  if (fieldOrText === undefined) return;
  const message: string = r.body.message;
  if (code === "INVALID_ARGUMENT" && FIELD_PATH.test(fieldOrText)) {
    expect(
      message.split("; ").some((part) => part.startsWith(`${fieldOrText}: `)),
      `message names ${fieldOrText}: ${message}`,
    ).toBe(true);
    const violated = ((r.body.details ?? []) as { fieldViolations?: { field: string }[] }[]).flatMap((detail) =>
      (detail.fieldViolations ?? []).map((violation) => violation.field),
    );
    if (violated.length > 0) expect(violated, r.text).toContain(fieldOrText);
  } else {
    expect(message, r.text).toContain(fieldOrText);
  }
}

// REST replies and the assertions on them.
import { expect } from "vitest";

export interface Reply {
  readonly status: number;
  readonly body: any;
  readonly text: string;
}

export const ok = (r: Reply): any => {
  expect(r.status, r.text).toBe(200);
  return r.body;
};

export const CODES = {
  INVALID_ARGUMENT: [400, 3],
  NOT_FOUND: [404, 5],
  ALREADY_EXISTS: [409, 6],
  PERMISSION_DENIED: [403, 7],
  RESOURCE_EXHAUSTED: [429, 8],
  FAILED_PRECONDITION: [400, 9],
  ABORTED: [409, 10],
  OUT_OF_RANGE: [400, 11],
  UNAVAILABLE: [503, 14],
  UNAUTHENTICATED: [401, 16],
  CANCELLED: [499, 1],
} as const;

/** Checks the HTTP status, the Status code, and that the message names `field` (`field: ...`) or contains `text`. */
export function expectError(r: Reply, code: keyof typeof CODES, field?: string): void {
  const [http, grpc] = CODES[code];
  expect(r.status, r.text).toBe(http);
  expect(r.body?.code, r.text).toBe(grpc);
  if (field !== undefined) {
    if (code === "INVALID_ARGUMENT") {
      expect(
        r.body.message.split("; ").some((p: string) => p.startsWith(`${field}: `)),
        `message names ${field}: ${r.body.message}`,
      ).toBe(true);
    } else {
      expect(r.body.message, r.text).toContain(field);
    }
  }
}

export const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");
export const unb64 = (s: string) => Buffer.from(s ?? "", "base64");

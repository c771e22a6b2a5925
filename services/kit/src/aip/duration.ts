// Protobuf Durations as the API receives them: a client may send any seconds and nanos, so a
// service checks them before it computes with them.
import type { Duration } from "@bufbuild/protobuf/wkt";

/** The protobuf Duration range, 10 000 years. */
const MAX_DURATION_SECONDS = 315_576_000_000n;

/** Total nanoseconds of a Duration, or a problem when it is not a valid protobuf Duration. */
export function durationNanos(d: Duration): bigint | string {
  const s = d.seconds;
  const n = d.nanos;
  if (s > MAX_DURATION_SECONDS || s < -MAX_DURATION_SECONDS) return "is out of range";
  if (!Number.isInteger(n) || n <= -1e9 || n >= 1e9) return "has out-of-range nanoseconds";
  if ((s > 0n && n < 0) || (s < 0n && n > 0)) return "has seconds and nanoseconds of different signs";
  return s * 1_000_000_000n + BigInt(n);
}

import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { durationNanos } from "./duration.js";

const duration = (seconds: bigint, nanos = 0) => create(DurationSchema, { seconds, nanos });

describe("durationNanos", () => {
  it("totals seconds and nanoseconds, negative ones too", () => {
    expect(durationNanos(duration(90n, 500))).toBe(90_000_000_500n);
    expect(durationNanos(duration(-1n, -5))).toBe(-1_000_000_005n);
    expect(durationNanos(duration(315_576_000_000n))).toBe(315_576_000_000_000_000_000n);
  });

  it("names what makes a Duration invalid", () => {
    expect(durationNanos(duration(315_576_000_001n))).toBe("is out of range");
    expect(durationNanos(duration(0n, 1e9))).toBe("has out-of-range nanoseconds");
    expect(durationNanos(duration(0n, 0.5))).toBe("has out-of-range nanoseconds");
    expect(durationNanos(duration(1n, -1))).toBe("has seconds and nanoseconds of different signs");
  });
});

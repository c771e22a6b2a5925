import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";

describe("logger", () => {
  it("writes one JSON object per line with the child's fields, skipping lower levels", () => {
    const lines: string[] = [];
    const log = createLogger({ level: "info", fields: { service: "edge" }, write: (l) => lines.push(l) });
    log.debug("hidden");
    log.child({ requestId: "r1" }).info("request", { status: 200, bytes: 10n });
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(entry).toMatchObject({
      level: "info",
      msg: "request",
      service: "edge",
      requestId: "r1",
      status: 200,
      bytes: "10",
    });
    expect(typeof entry.time).toBe("string");
  });

  it("serialises errors with their message", () => {
    const lines: string[] = [];
    createLogger({ write: (l) => lines.push(l) }).error("failed", { err: new Error("boom") });
    expect(JSON.parse(lines[0]!)).toMatchObject({ err: { name: "Error", message: "boom" } });
  });
});

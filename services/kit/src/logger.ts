/** Structured logs: one JSON object per line on stderr, so they can be shipped as they are. */
import { activeTraceIds } from "./observability/trace-context.js";

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** A logger whose lines all carry `fields` (a service name, a request id). */
  child(fields: Record<string, unknown>): Logger;
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LoggerOptions {
  readonly level?: LogLevel;
  readonly fields?: Record<string, unknown>;
  /** Where lines go; stderr by default. Tests pass an array's push. */
  readonly write?: (line: string) => void;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const min = rank[options.level ?? "info"];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const base = options.fields ?? {};
  const log = (level: LogLevel) => (message: string, fields?: Record<string, unknown>) => {
    if (rank[level] < min) return;
    // Inside a traced call (an RPC, an event's handling) the line names its trace and span.
    const ids = activeTraceIds();
    write(
      JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...ids, ...base, ...fields }, jsonSafe),
    );
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    child: (fields) => createLogger({ ...options, fields: { ...base, ...fields } }),
  };
}

export const silentLogger: Logger = createLogger({ write: () => {} });

// bigint (int64 fields) and Error causes would otherwise throw or vanish.
function jsonSafe(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

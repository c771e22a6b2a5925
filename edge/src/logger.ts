// The little the edge needs from a logger; a kit logger, pino or console all fit.
export interface EdgeLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: EdgeLogger = {
  warn() {},
  error() {},
};

export * from "./metrics.js";
export * from "./metrics-server.js";
export * from "./rpc-interceptor.js";
export * from "./instrumented-bus.js";
export * from "./trace-context.js";
export * from "./tracing.js";

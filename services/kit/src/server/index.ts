export { createAuthInterceptor } from "./auth-interceptor.js";
export type { AuthInterceptorOptions } from "./auth-interceptor.js";
export { guardHandler, rejectNul } from "./guard-handler.js";
export { principalKey, principalOf } from "./principal-context.js";
export type { HttpHandler, HttpRoute, ServiceDeps, ServiceModule } from "./service-module.js";

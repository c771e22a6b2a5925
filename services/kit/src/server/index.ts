export { createAuthInterceptor } from "./auth-interceptor.js";
export type { AuthInterceptorOptions } from "./auth-interceptor.js";
export { principalKey, principalOf } from "./principal-context.js";
export type { HttpHandler, HttpRoute, ServiceDeps, ServiceModule } from "./service-module.js";

export { createAuthInterceptor } from "./auth-interceptor.js";
export type { AuthInterceptorOptions } from "./auth-interceptor.js";
export { principalKey, principalOf } from "./principal-context.js";
export type { HttpHandler, HttpRoute, ServiceDeps, ServiceModule } from "./service-module.js";
export { guardHandler, registerGuarded, rejectNul, type GuardedHandlers } from "./handler-guard.js";
export type { GuardOptions } from "./handler-guard.js";
export { createServiceCore, createStartOnce } from "./service-core.js";
export type { ServiceCore, ServiceCoreState } from "./service-core.js";
export { openServiceStore } from "./service-store.js";
export type { ServiceStore } from "./service-store.js";
export { drained } from "./drain.js";
export {
  FORWARDED_HEADER,
  ServedElsewhere,
  forwardHttp,
  forwardUpgrade,
  forwardable,
  spliceUpgrade,
} from "./forwarding.js";
export { HOP_BY_HOP_HEADERS, isHopByHop } from "./hop-by-hop.js";
export { createReplicaRegistry, replicasMigration, REPLICAS_TABLE } from "./replica-registry.js";
export type { ReplicaRegistry, ReplicaRegistryOptions } from "./replica-registry.js";
export { detachBytesField, detachableBytesField, detachedBytes } from "./detached-bytes.js";
export type { DetachedBytes } from "./detached-bytes.js";
export {
  CREDENTIAL_HEADERS,
  OUR_COOKIE_PREFIX,
  cookiesForUserContent,
  isOurCookie,
  pipeUserUpgradeAnswer,
  userSetCookie,
  userSetCookies,
} from "./user-content.js";

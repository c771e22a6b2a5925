import type { Interceptor } from "@connectrpc/connect";
import type { Authenticator } from "../identity/authenticator.js";
import { principalKey } from "./principal-context.js";

export interface AuthInterceptorOptions {
  /** Services callable without a token (gRPC reflection: it only describes the public API). */
  readonly isPublicService?: (typeName: string) => boolean;
}

/**
 * Verifies the bearer token of every call before its handler runs and records the principal
 * for principalOf(). Requests without a valid token never reach a handler.
 */
export function createAuthInterceptor(authenticator: Authenticator, options: AuthInterceptorOptions = {}): Interceptor {
  return (next) => async (req) => {
    if (options.isPublicService?.(req.service.typeName)) return next(req);
    const principal = await authenticator.authenticate(req.header.get("authorization"));
    req.contextValues.set(principalKey, principal);
    return next(req);
  };
}

import { createContextKey, type HandlerContext } from "@connectrpc/connect";
import type { Principal } from "../identity/principal.js";
import { unauthenticated } from "../errors.js";

/** The authenticated caller of a request, set by the auth interceptor. */
export const principalKey = createContextKey<Principal | undefined>(undefined, {
  description: "authenticated principal",
});

/** The caller of the request being handled; UNAUTHENTICATED if no interceptor put one there. */
export function principalOf(ctx: HandlerContext): Principal {
  const principal = ctx.values.get(principalKey);
  if (!principal) throw unauthenticated("missing or invalid bearer token");
  return principal;
}

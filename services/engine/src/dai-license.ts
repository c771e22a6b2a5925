// The Driverless AI license the official client asks about. Driverless AI engines here are
// stand-in servers that need no license, so this deployment has none to describe; the answer
// says so (no metadata) rather than inventing one.
import type { HandlerContext } from "@connectrpc/connect";
import { principalOf } from "@aiem/kit/server";
import type { Handler } from "./engine-service.js";

export function createDAILicenseHandlers(): Record<string, Handler> {
  return {
    async GetDAILicenseMetadata(_req: Record<string, unknown>, hctx: HandlerContext) {
      principalOf(hctx); // any signed-in user may read it
      return {};
    },
  };
}

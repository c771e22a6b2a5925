// The Driverless AI license the official client asks about. Driverless AI engines here are
// stand-in servers that need no license, so this deployment has none to describe; the answer
// says so (no metadata) rather than inventing one.
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { principalOf } from "@aiem/kit/server";
import type { DAILicenseService } from "@aiem/proto/enginemanager/v1/dai_license_service_pb.js";

export function createDAILicenseHandlers(): ServiceImpl<typeof DAILicenseService> {
  return {
    async getDAILicenseMetadata(_req, ctx: HandlerContext) {
      principalOf(ctx); // any signed-in user may read it
      return {};
    },
  };
}

// A stand-in catalogue part for host tests: the notebook engine image service with only the
// calls a test gives it, and no database or background work.
import type { ServiceImpl } from "@connectrpc/connect";
import type { ServiceModule } from "@aiem/kit/server";
import { NotebookEngineImageService } from "@aiem/proto/enginemanager/v1/notebook_engine_image_service_pb.js";
import type { ModuleFactory } from "../host/create-host.js";

export function fakeImageCatalogue(
  handlers: Partial<ServiceImpl<typeof NotebookEngineImageService>>,
  more: Pick<Partial<ServiceModule>, "isReady" | "httpRoutes"> = {},
): ModuleFactory {
  return {
    name: "catalogue",
    create: (): ServiceModule => ({
      name: "catalogue",
      services: [NotebookEngineImageService],
      register(router) {
        router.service(NotebookEngineImageService, handlers);
      },
      start: async () => {},
      stop: async () => {},
      isReady: () => true,
      ...more,
    }),
  };
}

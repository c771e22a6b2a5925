// A sandbox's Service owns its pod and its ports' objects, so that deleting it takes them all.
import { createOwner, type Owner } from "@aiem/kit/kubernetes";
import type { CoreV1Api } from "@kubernetes/client-node";
import { sandboxObjectName, sandboxService } from "./sandbox-objects.js";

/** The sandbox's Service as an owner, made or read. */
export function createOwningService(core: CoreV1Api, namespace: string): (uid: string) => Promise<Owner> {
  return async (uid) => {
    const name = sandboxObjectName(uid);
    return createOwner(
      "Service",
      name,
      () => core.createNamespacedService({ namespace, body: sandboxService(uid, namespace) }),
      () => core.readNamespacedService({ namespace, name }),
    );
  };
}

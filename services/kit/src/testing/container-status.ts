// A pod's container status as unit tests of pod states write it: only its name and state matter.
import type { V1ContainerState, V1ContainerStatus } from "@kubernetes/client-node";

export function containerStatus(name: string, state: V1ContainerState): V1ContainerStatus {
  return { name, image: "i", imageID: "", ready: false, restartCount: 0, state };
}

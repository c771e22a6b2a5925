// What kwok does to pods in the test cluster: its own stages (nodes Ready, pods Running, deleted
// pods gone), and, for pods that carry the annotation `kubeletFaultAnnotation`, what a kubelet
// reports when something goes wrong, so that suites can see how the product reads it:
//   image-pull-error  the container waits with ErrImagePull (an image that does not exist)
//   oom               the pod fails, its container OOMKilled with exit code 137
//   hold              the pod stays Pending on its node (a volume that cannot be mounted, say)
// Tests put the annotation on a pod through whatever makes it (a profile's pod template).
import { parseAllDocuments, stringify } from "yaml";

export const kubeletFaultAnnotation = "kwok.aiem.test/kubelet";

export type KubeletFault = "image-pull-error" | "oom" | "hold";

const faultKey = `.metadata.annotations["${kubeletFaultAnnotation}"]`;

interface Stage {
  metadata: { name: string };
  spec: { selector?: { matchExpressions?: { key: string; operator: string; values?: string[] }[] } };
}

function faultStage(name: KubeletFault, statusTemplate: string): object {
  return {
    apiVersion: "kwok.x-k8s.io/v1alpha1",
    kind: "Stage",
    metadata: { name: `pod-${name}` },
    spec: {
      resourceRef: { apiGroup: "v1", kind: "Pod" },
      selector: {
        matchExpressions: [
          { key: ".metadata.deletionTimestamp", operator: "DoesNotExist" },
          { key: ".status.phase", operator: "In", values: ["Pending"] },
          { key: faultKey, operator: "In", values: [name] },
          // Once: a pod already showing the fault is left as it is.
          { key: ".status.containerStatuses", operator: "DoesNotExist" },
        ],
      },
      next: { statusTemplate },
    },
  };
}

/** Every container of the pod not ready, in `state` (the lines under a container's `state:`). */
function containersIn(state: string): string {
  return `containerStatuses:
{{ range .spec.containers }}
- image: {{ .image | Quote }}
  name: {{ .name | Quote }}
  ready: false
  restartCount: 0
  state:
${state}
{{ end }}`;
}

const imagePullError = `
{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "True"
  type: PodScheduled
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  type: Ready
  reason: ContainersNotReady
${containersIn(`    waiting:
      reason: ErrImagePull
      message: {{ printf "failed to pull and unpack image %q: not found" .image | Quote }}`)}
phase: Pending
`;

const oomKilled = `
{{ $now := Now }}
conditions:
- lastTransitionTime: {{ $now | Quote }}
  status: "False"
  type: Ready
  reason: PodFailed
${containersIn(`    terminated:
      exitCode: 137
      reason: OOMKilled
      startedAt: {{ $now | Quote }}
      finishedAt: {{ $now | Quote }}`)}
phase: Failed
startTime: {{ $now | Quote }}
`;

/** kwok's own stages (`kwok-stages` in the cache) with the fault stages added; pods with a fault skip `pod-ready`. */
export function testClusterStages(kwokStages: string): string {
  const documents = parseAllDocuments(kwokStages)
    .map((d) => d.toJS() as Stage | null)
    .filter((d): d is Stage => d !== null);
  for (const stage of documents) {
    if (stage.metadata.name !== "pod-ready") continue;
    stage.spec.selector?.matchExpressions?.push({ key: faultKey, operator: "DoesNotExist" });
  }
  const stages = [...documents, faultStage("image-pull-error", imagePullError), faultStage("oom", oomKilled)];
  return stages.map((stage) => stringify(stage)).join("---\n");
}

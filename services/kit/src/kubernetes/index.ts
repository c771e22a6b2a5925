// What the engine and sandbox runtimes on Kubernetes share: owner references and labels, the pod
// template merge, why a pod waits or ended, and tolerant create and delete calls.
export { createOrRead, ignoreNotFound } from "./object-calls.js";
export { managedBy, type Owner, ownerReferencesOf } from "./owner.js";
export { exitOf, type PodExit, type PodPending, pendingOf, type WarningOf } from "./pod-conditions.js";
export { mergePodTemplate, type PodTemplate } from "./pod-template.js";

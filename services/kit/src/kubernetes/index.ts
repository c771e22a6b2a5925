// What the engine and sandbox runtimes on Kubernetes share: owner references and labels, the pod
// template merge, informers, why a pod waits or ended, and tolerant create and delete calls.
export { type CachedInformer, type CoreObjects, coreInformer } from "./informers.js";
export { createOrRead, createOwner, ignoreNotFound } from "./object-calls.js";
export { managedBy, type Owner, ownerReferencesOf } from "./owner.js";
export { exitOf, type PodExit, type PodPending, pendingOf, type WarningOf } from "./pod-conditions.js";
export { type PodWarnings, type PodWarningsOptions, watchPodWarnings } from "./pod-warnings.js";
export { mergePodTemplate, type PodTemplate } from "./pod-template.js";

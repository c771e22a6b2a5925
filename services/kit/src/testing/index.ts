export { createTestDatabase, testSchemaName } from "./test-database.js";
export { binaryContent } from "./binary-content.js";
export { containerStatus } from "./container-status.js";
export {
  kubernetesArtifactPath,
  kubernetesCacheDir,
  kubernetesVersions,
  missingKubernetesArtifacts,
} from "./kubernetes-binaries.js";
export {
  kubernetesRequired,
  kubernetesUnavailable,
  startTestCluster,
  type TestCluster,
  type TestClusterOptions,
  type TestNode,
} from "./test-cluster.js";
export { kubernetesSkipReason, type NamespaceCluster, startNamespaceCluster } from "./namespace-cluster.js";
export { type KubeletFault, kubeletFaultAnnotation } from "./test-cluster-stages.js";
export { listAllPages, type Page } from "./list-pages.js";
export {
  CODES,
  type ErrorCode,
  expectError,
  ok,
  type Reply,
  replyOf,
  type RestCallOptions,
  type RestJson,
  resourceOf,
  restCall,
} from "./rest-assertions.js";
export { TEST_POLICY, TEST_USERS, TEST_WORKSPACE, UUID_WORKSPACE } from "./test-policy.js";
export { useTempDir, useTempDirs } from "./temp-dirs.js";
export { type Held, type WaitOptions, waitFor } from "./wait-for.js";

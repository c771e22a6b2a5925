export { createTestDatabase, testSchemaName } from "./test-database.js";
export { binaryContent } from "./binary-content.js";
export {
  kubernetesArtifactPath,
  kubernetesCacheDir,
  kubernetesVersions,
  missingKubernetesArtifacts,
} from "./kubernetes-binaries.js";
export {
  kubernetesUnavailable,
  startTestCluster,
  type TestCluster,
  type TestClusterOptions,
  type TestNode,
} from "./test-cluster.js";
export { type KubeletFault, kubeletFaultAnnotation } from "./test-cluster-stages.js";

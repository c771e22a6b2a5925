// What the test cluster is seeded with: simulated nodes kwok keeps Ready, the default storage
// class, and persistent volumes waiting in it.
import type { TestNode } from "./test-cluster.js";

export function nodeManifest(node: TestNode): string {
  // Every real node has ephemeral storage; pods with a limit on it (sandboxes) are placed by it.
  const allocatable = { cpu: "8", memory: "32Gi", "ephemeral-storage": "100Gi", pods: "110", ...node.allocatable };
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: node.name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
        ...node.labels,
      },
    },
    status: { allocatable, capacity: allocatable },
  });
}

export const storageClassManifest = JSON.stringify({
  apiVersion: "storage.k8s.io/v1",
  kind: "StorageClass",
  metadata: { name: "aiem-test", annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
  provisioner: "kubernetes.io/no-provisioner",
  volumeBindingMode: "Immediate",
  allowVolumeExpansion: true,
});

export function volumeManifest(index: number): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name: `aiem-test-${index}` },
    spec: {
      capacity: { storage: "100Gi" },
      // Either mode binds: engines' claims are ReadWriteOnce, the sandbox service's drive ReadWriteMany.
      accessModes: ["ReadWriteOnce", "ReadWriteMany"],
      storageClassName: "aiem-test",
      persistentVolumeReclaimPolicy: "Retain",
      // Never mounted: kwok runs no containers.
      hostPath: { path: `/nonexistent/aiem-test-${index}` },
    },
  });
}

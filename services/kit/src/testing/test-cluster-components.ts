// The test cluster's components and their flags: etcd and kube-apiserver (the control plane the
// others wait for), then kube-controller-manager, kube-scheduler and kwok.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { KubernetesArtifact } from "./kubernetes-binaries.js";
import type { Pki } from "./test-cluster-pki.js";
import type { ProcessGroup } from "./test-cluster-processes.js";
import { testClusterStages } from "./test-cluster-stages.js";

export interface ComponentLayout {
  readonly group: ProcessGroup;
  /** The path of a built artifact. */
  bin(name: KubernetesArtifact): string;
  /** The cluster's directory. */
  readonly dir: string;
  readonly pki: Pki;
}

export function startEtcd({ group, bin, dir }: ComponentLayout, etcdUrl: string, etcdPeer: number): void {
  group.start("etcd", bin("etcd"), [
    "--name=test",
    `--data-dir=${join(dir, "etcd")}`,
    `--listen-client-urls=${etcdUrl}`,
    `--advertise-client-urls=${etcdUrl}`,
    `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
    `--initial-cluster=test=http://127.0.0.1:${etcdPeer}`,
    // Test data is thrown away; fsync would only slow every write.
    "--unsafe-no-fsync",
  ]);
}

export function startApiserver({ group, bin, pki }: ComponentLayout, etcdUrl: string, port: number): void {
  group.start("kube-apiserver", bin("kube-apiserver"), [
    `--etcd-servers=${etcdUrl}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${port}`,
    "--advertise-address=127.0.0.1",
    "--endpoint-reconciler-type=none",
    `--tls-cert-file=${pki.apiserverCert}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--client-ca-file=${pki.caCert}`,
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    `--service-account-key-file=${pki.saPublic}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    "--service-cluster-ip-range=10.96.0.0/16",
    "--authorization-mode=RBAC",
    "--allow-privileged=true",
  ]);
}

/**
 * The controller manager, the scheduler and kwok, once the apiserver is ready; kwok gives pods
 * addresses from `podCidr`.
 */
export function startControllers(
  { group, bin, dir, pki }: ComponentLayout,
  kubeconfigPath: string,
  podCidr: string,
): void {
  const componentFlags = [
    `--kubeconfig=${kubeconfigPath}`,
    `--authentication-kubeconfig=${kubeconfigPath}`,
    `--authorization-kubeconfig=${kubeconfigPath}`,
    "--leader-elect=false",
    // No health endpoints: nothing here reads them, and no port can collide.
    "--secure-port=0",
  ];
  group.start("kube-controller-manager", bin("kube-controller-manager"), [
    ...componentFlags,
    `--service-account-private-key-file=${pki.saKey}`,
    `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    "--use-service-account-credentials=true",
    "--controllers=*",
  ]);
  group.start("kube-scheduler", bin("kube-scheduler"), componentFlags.slice(0, 5));
  const stagesPath = join(dir, "kwok-stages.yaml");
  writeFileSync(stagesPath, testClusterStages(readFileSync(bin("kwok-stages"), "utf8")));
  group.start("kwok", bin("kwok"), [
    `--kubeconfig=${kubeconfigPath}`,
    `--config=${stagesPath}`,
    "--manage-all-nodes=false",
    "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
    `--cidr=${podCidr}`,
    "--node-ip=10.0.0.1",
  ]);
}

// The test cluster's certificates (a CA, the apiserver's, an admin's, the service-account key
// pair), made with openssl, and the admin kubeconfig that uses them.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface Pki {
  readonly caCert: string;
  readonly caKey: string;
  readonly apiserverCert: string;
  readonly apiserverKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  readonly saKey: string;
  readonly saPublic: string;
}

export function createCertificates(dir: string): Pki {
  const path = (name: string) => join(dir, name);
  const openssl = (args: readonly string[]) => execFileSync("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
  const key = (name: string) =>
    openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path(name)]);
  key("ca.key");
  openssl([
    "req",
    "-x509",
    "-new",
    "-key",
    path("ca.key"),
    "-subj",
    "/CN=aiem-test-ca",
    "-days",
    "2",
    "-out",
    path("ca.crt"),
  ]);
  const sign = (name: string, subject: string, extensions: readonly string[]) => {
    key(`${name}.key`);
    openssl(["req", "-new", "-key", path(`${name}.key`), "-subj", subject, "-out", path(`${name}.csr`)]);
    writeFileSync(path(`${name}.ext`), `${extensions.join("\n")}\n`);
    openssl([
      "x509",
      "-req",
      "-in",
      path(`${name}.csr`),
      "-CA",
      path("ca.crt"),
      "-CAkey",
      path("ca.key"),
      "-CAcreateserial",
      "-days",
      "2",
      "-extfile",
      path(`${name}.ext`),
      "-out",
      path(`${name}.crt`),
    ]);
  };
  sign("apiserver", "/CN=kube-apiserver", [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=serverAuth",
    "subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default.svc",
  ]);
  // O=system:masters is cluster-admin; the controllers use it too, for simplicity.
  sign("admin", "/O=system:masters/CN=admin", [
    "basicConstraints=CA:FALSE",
    "keyUsage=digitalSignature,keyEncipherment",
    "extendedKeyUsage=clientAuth",
  ]);
  openssl(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", path("sa.key")]);
  openssl(["pkey", "-in", path("sa.key"), "-pubout", "-out", path("sa.pub")]);
  return {
    caCert: path("ca.crt"),
    caKey: path("ca.key"),
    apiserverCert: path("apiserver.crt"),
    apiserverKey: path("apiserver.key"),
    adminCert: path("admin.crt"),
    adminKey: path("admin.key"),
    saKey: path("sa.key"),
    saPublic: path("sa.pub"),
  };
}

export function kubeconfigText(server: string, pki: Pki): string {
  const base64 = (file: string) => readFileSync(file).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${server}`,
    `    certificate-authority-data: ${base64(pki.caCert)}`,
    "users:",
    "- name: admin",
    "  user:",
    `    client-certificate-data: ${base64(pki.adminCert)}`,
    `    client-key-data: ${base64(pki.adminKey)}`,
    "contexts:",
    "- name: test",
    "  context: {cluster: test, user: admin}",
    "current-context: test",
    "",
  ].join("\n");
}

import type { Dependency } from "./plan.js";

/** What `npm test` needs beyond Node.js and npm. Add here what new suites need. */
export const testDependencies: readonly Dependency[] = [
  { debianPackage: "bubblewrap", purpose: "sandbox isolation", probes: ["bwrap"] },
  {
    debianPackage: "gcc",
    purpose: "compiling the sandboxes' launcher, entry program, seccomp filter and peer check",
    probes: ["cc"],
  },
  { debianPackage: "libseccomp-dev", purpose: "the sandboxes' seccomp filter", probes: ["/usr/include/seccomp.h"] },
  { debianPackage: "chromium", purpose: "the docs site's browser tests", probes: ["/usr/bin/chromium"] },
  { debianPackage: "jupyter-notebook", purpose: "notebook engines", probes: ["jupyter-notebook"] },
  { debianPackage: "openjdk-17-jre-headless", purpose: "H2O engines (H2O-3 runs on Java)", probes: ["java"] },
];

/** What CI needs besides: the servers the suites also run against. */
export const serviceDependencies: readonly Dependency[] = [
  { debianPackage: "postgresql", purpose: "DATABASE_URL", probes: ["/usr/lib/postgresql/*/bin/postgres"] },
  { debianPackage: "nats-server", purpose: "NATS_URL", probes: ["nats-server"] },
];

export const testDatabaseUrl = "postgres://postgres@127.0.0.1:5432/test";
export const natsPort = 4222;
export const postgresPort = 5432;

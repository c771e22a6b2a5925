// The sandbox service: sandbox engines and what runs inside them (files, processes, ports, drive
// and secure-store transfers). A host mounts createSandboxModule() behind the auth interceptor;
// the agent and the local isolation runtime live in ./agent and ./runtime.
export { readSandboxEnv } from "./config.js";
export type { SandboxConfig, SandboxSettings } from "./config.js";
export { SANDBOX_SCHEMA, SANDBOX_SERVICES, createSandboxModule } from "./module.js";
export type { SandboxModule, SandboxModuleDeps } from "./module.js";
export type { SecretResolver, SecretReveal } from "./process-definition.js";
export { CONTENT_ORIGIN_HEADER } from "./port-proxy.js";

// Entry point of the sandbox agent, bundled into one file and run inside the sandbox. The host
// passes its settings as JSON in AIEM_AGENT_CONFIG; the agent answers on a unix socket and
// prints "ready" on standard output once it does. The same bundle also builds the agent's V8
// startup snapshot (see runtime/agent-artifacts.ts): then every module is evaluated at build
// time and main runs when a sandbox starts from the snapshot.
import * as fs from "node:fs";
import * as path from "node:path";
import { startupSnapshot } from "node:v8";
import { installMinimalHeaders } from "./fast-headers.js";
import { type AgentOptions, listenAgent } from "./server.js";

export interface AgentConfig extends AgentOptions {
  /**
   * The descriptor of the unix socket to serve on, bound by the host at a path of its own (see
   * runtime/README.md, "The agent's socket"). It must be close-on-exec already: programs the
   * agent starts never hold it.
   */
  readonly socketFd?: number;
  /** A unix socket path to bind instead (tests of the agent alone). */
  readonly socket?: string;
  /** Whether to create /workspace and /tmp when they are missing (a new sandbox). */
  readonly ensureDirs?: boolean;
}

function ensureDir(dir: string, mode: number): void {
  try {
    fs.mkdirSync(dir, { mode });
    fs.chmodSync(dir, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

declare const AIEM_AGENT_VERSION: string | undefined;

/** Whether descriptor `fd` of this process is a socket marked close-on-exec. */
function checkSocketDescriptor(fd: number): void {
  let target: string;
  let flags: number;
  try {
    target = fs.readlinkSync(`/proc/self/fd/${fd}`);
    flags = Number.parseInt(
      /^flags:\s*([0-7]+)$/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1] ?? "",
      8,
    );
  } catch (error) {
    throw new Error(
      `the socket descriptor ${fd} is not open: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (!target.startsWith("socket:")) throw new Error(`descriptor ${fd} is not a socket but ${target}`);
  // O_CLOEXEC: without it every program started here would hold the agent's socket.
  if (!(flags & 0o2000000)) throw new Error(`the socket descriptor ${fd} is not close-on-exec`);
}

async function main(): Promise<void> {
  // Node opens its inspector on SIGUSR1 unless a listener takes the signal; anything in the
  // sandbox may send it.
  process.on("SIGUSR1", () => undefined);
  installMinimalHeaders();
  const raw = process.env["AIEM_AGENT_CONFIG"];
  if (raw === undefined) throw new Error("AIEM_AGENT_CONFIG is not set");
  delete process.env["AIEM_AGENT_CONFIG"];
  const config = JSON.parse(raw) as AgentConfig;
  // Files and directories the agent and its processes create get 0644 and 0755 by default.
  process.umask(0o022);
  if (config.ensureDirs) {
    ensureDir(path.join(config.root, "workspace"), 0o755);
    ensureDir(path.join(config.root, "tmp"), 0o1777);
  }
  const version = typeof AIEM_AGENT_VERSION === "string" ? AIEM_AGENT_VERSION : config.version;
  let socket: string | { fd: number };
  if (config.socketFd !== undefined) {
    checkSocketDescriptor(config.socketFd);
    socket = { fd: config.socketFd };
  } else if (config.socket !== undefined) socket = config.socket;
  else throw new Error("the configuration names no socket");
  const server = await listenAgent(socket, { ...config, version });
  const shutdown = () => {
    server.processes.killAll();
    process.exit(0);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  process.stdout.write("ready\n");
}

function run(): void {
  main().catch((error: unknown) => {
    process.stderr.write(`agent failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

if (startupSnapshot.isBuildingSnapshot()) startupSnapshot.setDeserializeMainFunction(run);
else run();

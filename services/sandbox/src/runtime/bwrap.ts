// The bubblewrap command line of one sandbox: its root directory as `/`, the host's system
// directories read-only, fresh /proc and /dev, its own PID, IPC, UTS and network namespaces, no
// capabilities, and the agent's files under /.aiem.
import * as fs from "node:fs";
import * as path from "node:path";

/** Host directories shared read-only with every sandbox, when the host has them. */
export const SYSTEM_DIRS = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc"] as const;

/** Files in the shared /etc that hold host secrets: each sandbox sees them empty. */
const MASKED_ETC_FILES = ["shadow", "shadow-", "gshadow", "gshadow-", "sudoers"];
const MASKED_ETC_DIRS = ["ssh", "ssl/private", "sudoers.d"];

/** Writable or revealing kernel files in /proc, covered like container runtimes do. */
const READ_ONLY_PROC = ["sys", "sysrq-trigger", "fs", "bus", "irq"];
const MASKED_PROC = ["kcore", "keys", "timer_list", "sched_debug", "latency_stats", "kallsyms"];

/** Where the agent's files appear inside the sandbox. */
export const SANDBOX_AGENT_DIR = "/.aiem";
export const SANDBOX_AGENT_BUNDLE = "/.aiem/agent.mjs";
export const SANDBOX_SPAWN_HELPER = "/.aiem/spawn-helper";
export const SANDBOX_RUN_DIR = "/.aiem/run";
export const SANDBOX_NODE = "/.aiem/node";

export function findBwrap(explicit?: string): string | undefined {
  if (explicit) return fs.existsSync(explicit) ? explicit : undefined;
  for (const dir of (process.env["PATH"] ?? "/usr/bin:/bin").split(":").concat(["/usr/bin", "/bin"])) {
    if (!dir) continue;
    const file = path.join(dir, "bwrap");
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

function exists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/** Whether the host path lies under one of the shared system directories. */
export function isUnderSystemDirs(file: string): boolean {
  const real = fs.realpathSync(file);
  return SYSTEM_DIRS.some((d) => real === `/${d}` || real.startsWith(`/${d}/`));
}

export interface BwrapArgsOptions {
  /** The host directory that becomes `/`. */
  readonly root: string;
  /** The host directory that becomes /.aiem/run (the agent's socket). */
  readonly runDir: string;
  readonly bundlePath: string;
  readonly helperPath: string | undefined;
  /** The node binary on the host. */
  readonly nodePath: string;
  readonly agentConfig: string;
  readonly hostname: string;
}

/** The arguments after `bwrap`, ending with the agent's command. */
export function buildBwrapArgs(options: BwrapArgsOptions): string[] {
  const args = [
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    "--hostname",
    options.hostname,
    "--bind",
    options.root,
    "/",
  ];
  for (const dir of SYSTEM_DIRS) {
    const host = `/${dir}`;
    // Debian's /bin, /lib* are links into /usr: bind what they point to, so the sandbox cannot
    // replace them with links of its own.
    if (isDirectory(host)) args.push("--ro-bind", fs.realpathSync(host), host);
  }
  for (const file of MASKED_ETC_FILES) {
    if (exists(`/etc/${file}`) && !isDirectory(`/etc/${file}`)) args.push("--ro-bind", "/dev/null", `/etc/${file}`);
  }
  for (const dir of MASKED_ETC_DIRS) {
    if (isDirectory(`/etc/${dir}`)) args.push("--tmpfs", `/etc/${dir}`, "--remount-ro", `/etc/${dir}`);
  }
  args.push("--proc", "/proc");
  for (const entry of READ_ONLY_PROC) {
    if (exists(`/proc/${entry}`)) args.push("--ro-bind", `/proc/${entry}`, `/proc/${entry}`);
  }
  for (const entry of MASKED_PROC) {
    if (exists(`/proc/${entry}`)) args.push("--ro-bind", "/dev/null", `/proc/${entry}`);
  }
  args.push("--dev", "/dev");
  args.push("--ro-bind", options.bundlePath, SANDBOX_AGENT_BUNDLE);
  if (options.helperPath) args.push("--ro-bind", options.helperPath, SANDBOX_SPAWN_HELPER);
  args.push("--bind", options.runDir, SANDBOX_RUN_DIR);
  let node = options.nodePath;
  if (!isUnderSystemDirs(node)) {
    args.push("--ro-bind", fs.realpathSync(node), SANDBOX_NODE);
    node = SANDBOX_NODE;
  }
  args.push(
    "--clearenv",
    "--setenv",
    "PATH",
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "--setenv",
    "AIEM_AGENT_CONFIG",
    options.agentConfig,
    "--chdir",
    "/",
    "--",
    node,
    SANDBOX_AGENT_BUNDLE,
  );
  return args;
}

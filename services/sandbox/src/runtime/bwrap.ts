// The bubblewrap command line of one sandbox: its root directory as `/`, the host's system
// directories read-only, fresh /proc and /dev, its own PID, IPC, UTS and network namespaces, no
// capabilities, and the agent's files under /.aiem.
import * as fs from "node:fs";
import * as path from "node:path";

/** Host directories shared read-only with every sandbox, when the host has them. */
export const SYSTEM_DIRS = ["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"] as const;

/**
 * What the sandbox's private /etc takes from the host's, read-only: package data programs need
 * (the dynamic linker's cache, Debian's alternatives, CA certificates, time zone, locale aliases,
 * protocol and service names, shell and language runtime defaults). Nothing naming the host's
 * users, services or secrets; users, groups, hosts and the resolver are written per sandbox.
 */
export const SHARED_ETC_ENTRIES = [
  "alternatives",
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "ssl/certs",
  "ssl/openssl.cnf",
  "ca-certificates",
  "localtime",
  "timezone",
  "locale.alias",
  "mime.types",
  "protocols",
  "services",
  "rpc",
  "ethertypes",
  "shells",
  "profile",
  "profile.d",
  "bash.bashrc",
  "inputrc",
  "environment",
  "python3",
  "python3.11",
  "fonts",
  "java-17-openjdk",
  "jupyter",
  "terminfo",
  "magic",
  "magic.mime",
  "gai.conf",
  "host.conf",
  "debian_version",
  "os-release",
  "lsb-release",
  "vim",
  "X11",
] as const;

/** The files of the private /etc written for each sandbox. */
export function privateEtcFiles(hostname: string): Record<string, string> {
  return {
    passwd: "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
    group: "root:x:0:\nnogroup:x:65534:\n",
    hostname: `${hostname}\n`,
    hosts: `127.0.0.1\tlocalhost ${hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\n`,
    // The sandbox has no network beyond its loopback: names resolve from /etc/hosts.
    "resolv.conf": "options timeout:1 attempts:1\n",
    "nsswitch.conf":
      "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\nethers: files\nrpc: files\n",
  };
}

/** The entries of SHARED_ETC_ENTRIES this host has. */
export function sharedEtcEntries(): string[] {
  return SHARED_ETC_ENTRIES.filter((entry) => exists(`/etc/${entry}`));
}

/**
 * Makes `etcDir` (which holds the private files) the private /etc but for the shared entries,
 * which the launcher binds in (sandbox-launch.c), so that bubblewrap binds it once.
 */
export function prepareEtcTree(etcDir: string): void {
  fs.symlinkSync("../proc/self/mounts", path.join(etcDir, "mtab"));
}

/** Writable or revealing kernel files in /proc, covered like container runtimes do. */
const READ_ONLY_PROC = ["sys", "sysrq-trigger", "fs", "bus", "irq"];
const MASKED_PROC = ["kcore", "keys", "timer_list", "sched_debug", "latency_stats", "kallsyms"];

/**
 * The layers of a sandbox's isolation, each on by default. Switching one off is for tests that
 * show what the layer stops; a service never does.
 */
export interface IsolationLayers {
  /** Root inside is an unprivileged host uid/gid range of the sandbox's own. */
  readonly userNamespace: boolean;
  /** The capability bounding set is empty, so nothing inside can ever gain a capability. */
  readonly emptyBoundingSet: boolean;
  /** The seccomp filter of seccomp-policy.c. */
  readonly seccomp: boolean;
  /** /etc holds only what programs need, none of the host's configuration. */
  readonly privateEtc: boolean;
  /** No host path in /proc/<pid>/cmdline or mountinfo: arguments by file, agent files copied. */
  readonly hideHostPaths: boolean;
  /** Every capability dropped (off: the sandbox's root keeps them all). */
  readonly dropCapabilities: boolean;
  /** A PID namespace of its own (off: the host's processes are visible; needs the user namespace off). */
  readonly pidNamespace: boolean;
}

export const ALL_LAYERS: IsolationLayers = {
  userNamespace: true,
  emptyBoundingSet: true,
  seccomp: true,
  privateEtc: true,
  hideHostPaths: true,
  dropCapabilities: true,
  pidNamespace: true,
};

/** Where the agent's files appear inside the sandbox. */
export const SANDBOX_AGENT_DIR = "/.aiem";
/** The agent, one static binary (services/sandbox/go-agent). */
export const SANDBOX_AGENT = "/.aiem/agent";
/** Its argument to empty every capability set of its own before it serves. */
export const AGENT_DROP_CAPABILITIES = "--drop-capabilities";
/**
 * Where the agent is published for every sandbox to bind read-only: one file for all of them, so
 * the kernel keeps one copy of its pages (a copy per sandbox, on its stage, held 5.5 MiB of every
 * idle sandbox's memory), at a path that names nothing of the data directory's (a bind shows its
 * source's path within its file system in the sandbox's mountinfo).
 */
export const SHARED_AGENT_DIR = "/run/aiem-agent";
/** The descriptor the agent's socket reaches the agent as (see README.md, "The agent's socket"). */
export const AGENT_SOCKET_FD = 5;
/**
 * Where sandbox-launch, in its own mount namespace, puts the sandbox's root and stage for
 * bubblewrap (`<place>/root`, `<place>/stage`): an empty directory every user may pass through,
 * so that bubblewrap, which runs as the sandbox's uid, never has to pass through the data
 * directory (which may lie in a 0700 home). On the host it stays empty.
 */
export const LAUNCH_PLACE = "/run/aiem-launch";

const published = new Set<string>();

/**
 * Publishes the agent `file` (named by the hash of its sources) in `dir`, once, and returns the
 * published file; undefined where that cannot be done safely (not root, or `dir` or a directory
 * above it writable by others), when sandboxes get a copy each on their stage instead.
 */
export function publishSharedAgent(file: string, dir: string = SHARED_AGENT_DIR): string | undefined {
  const target = path.join(dir, path.basename(file));
  // Checked once per file and process; afterwards only that it is still there.
  if (published.has(target) && fs.existsSync(target)) return target;
  published.delete(target);
  try {
    if (process.getuid?.() !== 0) return undefined;
    fs.mkdirSync(dir, { recursive: true, mode: 0o755 });
    // Whoever may write here could replace the agent of every sandbox.
    for (let d = dir; ; d = path.dirname(d)) {
      const st = fs.lstatSync(d);
      if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) return undefined;
      if (d === path.dirname(d)) break;
    }
    const size = fs.statSync(file).size;
    const have = fs.lstatSync(target, { throwIfNoEntry: false });
    if (have?.isFile() && have.uid === 0 && have.size === size && (have.mode & 0o222) === 0) {
      published.add(target);
      return target;
    }
    const staging = path.join(dir, `.${path.basename(file)}.${process.pid}.${Date.now()}`);
    fs.copyFileSync(file, staging);
    fs.chmodSync(staging, 0o555);
    fs.renameSync(staging, target);
    published.add(target);
    return target;
  } catch {
    return undefined;
  }
}

export function findBwrap(explicit?: string): string | undefined {
  if (explicit) return fs.existsSync(explicit) ? explicit : undefined;
  for (const dir of (process.env.PATH ?? "/usr/bin:/bin").split(":").concat(["/usr/bin", "/bin"])) {
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
  /**
   * A host directory on a tmpfs of the sandbox's launcher (see local-runtime.ts) holding the
   * agent, run/ (the agent's socket) and etc/ (the private /etc files).
   */
  readonly stageDir: string;
  /**
   * The agent on the host, bound from there when host paths are not hidden. It makes itself
   * undumpable and its descriptors close-on-exec (docs/adr/0150-native-sandbox-agent.md).
   */
  readonly agentPath: string;
  /** The agent as publishSharedAgent published it: bound from there, not from the stage. */
  readonly sharedAgentPath?: string | undefined;
  readonly agentConfig: string;
  readonly hostname: string;
  readonly layers: IsolationLayers;
  /**
   * The stage's etc/ is the whole private /etc, the shared entries bound in by the launcher
   * (prepareEtcTree): bound once, instead of a bind per entry.
   */
  readonly etcPrepared?: boolean | undefined;
  /** The file descriptor the seccomp filter is read from, when the layer is on. */
  readonly seccompFd?: number | undefined;
  /** Whether the sandbox ends with the process that started bwrap (default true). */
  readonly dieWithParent?: boolean | undefined;
}

/**
 * The arguments of `bwrap` and the agent's command after them. `options` go before the command;
 * with hidden host paths they are passed through a file (`--args`), so that the sandbox's pid 1,
 * bubblewrap's reaper, shows no host path in its command line.
 */
export function buildBwrapArgs(options: BwrapArgsOptions): { options: string[]; command: string[] } {
  const { layers, stageDir } = options;
  const args = [
    ...(options.dieWithParent === false ? [] : ["--die-with-parent"]),
    "--new-session",
    layers.dropCapabilities ? "--cap-drop" : "--cap-add",
    "ALL",
    ...(layers.pidNamespace ? ["--unshare-pid"] : []),
    "--unshare-net",
    "--unshare-ipc",
    "--unshare-uts",
    // /proc/self/cgroup would otherwise name the host's cgroup path of the sandbox.
    ...(layers.hideHostPaths ? ["--unshare-cgroup"] : []),
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
  if (layers.privateEtc && options.etcPrepared) {
    args.push("--ro-bind", path.join(stageDir, "etc"), "/etc");
  } else if (layers.privateEtc) {
    args.push("--tmpfs", "/etc");
    for (const name of Object.keys(privateEtcFiles(options.hostname))) {
      args.push("--ro-bind", path.join(stageDir, "etc", name), `/etc/${name}`);
    }
    for (const entry of sharedEtcEntries()) args.push("--ro-bind", `/etc/${entry}`, `/etc/${entry}`);
    args.push("--symlink", "../proc/self/mounts", "/etc/mtab", "--remount-ro", "/etc");
  } else {
    args.push("--ro-bind", fs.realpathSync("/etc"), "/etc");
  }
  args.push("--proc", "/proc");
  for (const entry of READ_ONLY_PROC) {
    if (exists(`/proc/${entry}`)) args.push("--ro-bind", `/proc/${entry}`, `/proc/${entry}`);
  }
  for (const entry of MASKED_PROC) {
    if (exists(`/proc/${entry}`)) args.push("--ro-bind", "/dev/null", `/proc/${entry}`);
  }
  // bubblewrap's init stays dumpable: its memory is not the sandbox's to write (seccomp-policy.c
  // keeps ptrace and its kin off it).
  if (layers.pidNamespace) args.push("--ro-bind", "/dev/null", "/proc/1/mem");
  args.push("--dev", "/dev");
  const agentSource =
    options.sharedAgentPath ?? (layers.hideHostPaths ? path.join(stageDir, "agent") : options.agentPath);
  args.push("--ro-bind", agentSource, SANDBOX_AGENT);
  if (layers.seccomp && options.seccompFd !== undefined) args.push("--seccomp", String(options.seccompFd));
  // bubblewrap, run as root, leaves the bounding set full; the agent's first step empties it,
  // for which it keeps CAP_SETPCAP until then (the step drops it too).
  if (layers.emptyBoundingSet && layers.dropCapabilities) args.push("--cap-add", "CAP_SETPCAP");
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
  );
  // The agent is the PID namespace's init itself (no bubblewrap reaper before it), and empties
  // the bounding set itself (no setpriv before it): docs/adr/0190.
  if (layers.pidNamespace) args.push("--as-pid-1");
  const command = layers.emptyBoundingSet ? [SANDBOX_AGENT, AGENT_DROP_CAPABILITIES] : [SANDBOX_AGENT];
  return { options: args, command };
}

# Escape and hardening checks of isolation.test.ts, run by python3 inside a sandbox. Reads
# /tmp/checks.json ({"hostPid": a host process, "dataDir": the host's data directory}; from a
# file, so that neither shows in this process's own command line) and prints one JSON object:
# check name -> what happened ("failed..." is what a sandbox must answer to the escape attempts).
import ctypes, json, os, subprocess, time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
given = json.load(open("/tmp/checks.json"))
results = {}


def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return line.split()[1]


def command(*argv):
    return "ok" if subprocess.run(argv, capture_output=True).returncode == 0 else "failed"


def syscall(number, *args):
    if libc.syscall(number, *args) >= 0:
        return "ok"
    return "failed:" + os.strerror(ctypes.get_errno())


results["capBnd"] = status("CapBnd")
results["seccomp"] = status("Seccomp")
os.makedirs("/tmp/m", exist_ok=True)
results["mount"] = command("mount", "-t", "tmpfs", "none", "/tmp/m")
results["unshareUser"] = command("unshare", "-U", "true")
results["keyctl"] = syscall(250, 1, None)  # keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)
bpf_attr = (ctypes.c_uint32 * 30)(2, 4, 4, 1)  # a one-entry array map
results["bpf"] = syscall(321, 0, ctypes.byref(bpf_attr), ctypes.sizeof(bpf_attr))  # bpf(BPF_MAP_CREATE)
results["ptraceOutside"] = syscall(101, 16, given["hostPid"], 0, 0)  # ptrace(PTRACE_ATTACH)
if results["ptraceOutside"] == "ok":
    time.sleep(0.1)
    libc.syscall(101, 17, given["hostPid"], 0, 0)  # PTRACE_DETACH: leave the host's process as it was

host_config = ["/etc/postgresql", "/etc/nats-server.conf", "/etc/fstab", "/etc/ssh", "/etc/apt", "/etc/cron.d", "/etc/machine-id"]
found = [f for f in host_config if os.path.exists(f)]
results["hostConfig"] = "found:" + ",".join(found) if found else "failed"

needle = given["dataDir"].encode()
found = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for name in ("cmdline", "environ", "mountinfo"):
        try:
            if needle in open(f"/proc/{pid}/{name}", "rb").read():
                found.append(f"{pid}/{name}")
        except OSError:
            pass
results["dataDirInProc"] = "found:" + ",".join(found) if found else "failed"
own_cgroups = [line.split(":", 2)[2].strip() for line in open("/proc/self/cgroup")]
results["hostCgroupPath"] = "found:" + ",".join(c for c in own_cgroups if c != "/") if any(c != "/" for c in own_cgroups) else "failed"


# Limits. Processes: start up to 200 sleeping children, never more (a bounded fork bomb).
children, refused = [], None
for _ in range(200):
    try:
        pid = os.fork()
    except OSError as error:
        refused = error.strerror
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
results["processes"] = f"started {len(children)}" + (f", then {refused}" if refused else "")

# CPU: the share of one core this process gets while spinning for a second.
wall, cpu = time.monotonic(), time.process_time()
while time.monotonic() - wall < 1.0:
    pass
results["cpuShare"] = round((time.process_time() - cpu) / (time.monotonic() - wall), 2)

# Storage: 8 MiB files until 64 MiB are written or the filesystem says no.
written, error = 0, None
try:
    for i in range(8):
        with open(f"/workspace/fill-{i}", "wb") as f:
            for _ in range(8):
                f.write(b"\0" * (1 << 20))
                f.flush()
                os.fsync(f.fileno())
                written += 1
except OSError as e:
    error = e.strerror
for i in range(8):
    try:
        os.unlink(f"/workspace/fill-{i}")
    except OSError:
        pass
results["storage"] = f"wrote {written} MiB" + (f", then {error}" if error else "")
print(json.dumps(results))

/*
 * The seccomp policy of every sandbox, written with libseccomp (Debian's libseccomp-dev). This
 * program prints the compiled BPF filter on standard output; the runtime runs it once, caches
 * the filter by the hash of this source, and hands it to `bwrap --seccomp`, which installs it
 * (with no_new_privs) before the agent starts, so the agent and every process in the sandbox run
 * under it.
 *
 * The policy is an allowlist, like the default profile of the common container runtimes: a
 * system call not named below fails with EPERM. What is left out, and why:
 *   - mounting and namespaces: mount, umount2, pivot_root, the new mount API (fsopen, fsmount,
 *     fsconfig, fspick, open_tree, move_mount, mount_setattr), unshare, setns, and clone with a
 *     namespace flag (clone3 answers ENOSYS, so that C libraries fall back to clone, whose flags
 *     a filter can see). A new user namespace is the usual first step of a kernel exploit.
 *   - the kernel keyring: add_key, request_key, keyctl (not namespaced).
 *   - bpf, perf_event_open, userfaultfd, io_uring_*: large kernel attack surface, and the last
 *     two widen race windows in exploits.
 *   - kernel modules and replacing the kernel: init_module, finit_module, delete_module,
 *     kexec_load, kexec_file_load, reboot, swapon, swapoff, acct, quotactl*.
 *   - the host's clock, and its kernel log: settimeofday, clock_settime, clock_adjtime,
 *     adjtimex, syslog.
 *   - open_by_handle_at, name_to_handle_at (reach files outside a bind mount), lookup_dcookie,
 *     ioperm, iopl, the NUMA memory policy calls, personality other than the usual execution
 *     domains, and the obsolete calls nothing uses (uselib, ustat, sysfs, _sysctl, vm86, ...).
 * ptrace and process_vm_readv/writev are allowed, as in those profiles on current kernels: the
 * sandbox's PID namespace makes only its own processes visible, and its user namespace gives it
 * no rights over the host's. Not on pid 1, though (nor pidfd_open of it): that is bubblewrap's
 * init, which stays dumpable and holds the agent's output, a pipe to the service's launcher and
 * a log file on the host; nothing in the sandbox needs to trace it. (Its /proc/1/mem is masked.)
 *
 * Usage: seccomp-policy > filter.bpf    (exit 1 when libseccomp refuses a rule)
 */
#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const allowed[] = {
  /* files and directories */
  "access", "chdir", "chmod", "chown", "close", "close_range", "copy_file_range", "creat", "dup",
  "dup2", "dup3", "faccessat", "faccessat2", "fadvise64", "fallocate", "fchdir", "fchmod",
  "fchmodat", "fchown", "fchownat", "fcntl", "fdatasync", "flock", "fstat", "fstatfs", "fsync",
  "ftruncate", "getcwd", "getdents", "getdents64", "lchown", "link", "linkat", "lseek", "lstat",
  "mkdir", "mkdirat", "mknod", "mknodat", "newfstatat", "open", "openat", "openat2", "pread64",
  "preadv", "preadv2", "pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink",
  "readlinkat", "readv", "rename", "renameat", "renameat2", "rmdir", "sendfile", "splice", "stat",
  "statfs", "statx", "fchmodat2", "cachestat", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "tee",
  "truncate", "umask", "unlink", "unlinkat", "utime", "utimensat", "utimes", "futimesat",
  "vmsplice", "write", "writev",
  /* extended attributes */
  "fgetxattr", "flistxattr", "fremovexattr", "fsetxattr", "getxattr", "lgetxattr", "listxattr",
  "llistxattr", "lremovexattr", "lsetxattr", "removexattr", "setxattr",
  /* waiting for files and events */
  "epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old", "epoll_pwait", "epoll_pwait2",
  "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2", "fanotify_mark", "inotify_add_watch",
  "inotify_init", "inotify_init1", "inotify_rm_watch", "pause", "poll", "ppoll", "pselect6",
  "select", "signalfd", "signalfd4", "timerfd_create", "timerfd_gettime", "timerfd_settime",
  /* pipes, sockets (in the sandbox's own network namespace) and message queues */
  "accept", "accept4", "bind", "connect", "getpeername", "getsockname", "getsockopt", "listen",
  "pipe", "pipe2", "recvfrom", "recvmmsg", "recvmsg", "sendmmsg", "sendmsg", "sendto",
  "setsockopt", "shutdown", "socket", "socketpair", "mq_getsetattr", "mq_notify", "mq_open",
  "mq_timedreceive", "mq_timedsend", "mq_unlink",
  /* memory */
  "brk", "madvise", "membarrier", "memfd_create", "memfd_secret", "mincore", "mlock", "mlock2",
  "mlockall", "mmap", "mprotect", "mremap", "msync", "munlock", "munlockall", "munmap",
  "pkey_alloc", "pkey_free", "pkey_mprotect", "process_madvise", "process_mrelease",
  "remap_file_pages",
  /* System V IPC (the sandbox's own IPC namespace) */
  "msgctl", "msgget", "msgrcv", "msgsnd", "semctl", "semget", "semop", "semtimedop", "shmat",
  "shmctl", "shmdt", "shmget",
  /* processes, threads and signals (clone is below, with its flags checked) */
  "arch_prctl", "get_thread_area", "set_thread_area", "capget", "capset", "execve", "execveat",
  "exit", "exit_group", "fork",
  "get_robust_list", "getpgid", "getpgrp", "getpid", "getppid", "getpriority", "getrlimit",
  "getrusage", "getsid", "gettid", "ioprio_get", "ioprio_set", "kill", "pidfd_getfd",
  "pidfd_send_signal", "prctl", "prlimit64", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask",
  "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait", "rt_tgsigqueueinfo",
  "sched_get_priority_max", "sched_get_priority_min", "sched_getaffinity", "sched_getattr",
  "sched_getparam", "sched_getscheduler", "sched_rr_get_interval", "sched_setaffinity",
  "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield", "set_robust_list",
  "set_tid_address", "setpgid", "setpriority", "setrlimit", "setsid", "sigaltstack", "tgkill",
  "tkill", "vfork", "wait4", "waitid", "futex", "futex_waitv", "futex_wait", "futex_wake",
  "futex_requeue", "seccomp", "map_shadow_stack",
  /* the kernel's own continuation of a system call interrupted by a stop (SIGSTOP, SIGCONT) */
  "restart_syscall",
  "landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self",
  /* users and groups (inside the sandbox's user namespace) */
  "getegid", "geteuid", "getgid", "getgroups", "getresgid", "getresuid", "getuid", "setfsgid",
  "setfsuid", "setgid", "setgroups", "setregid", "setresgid", "setresuid", "setreuid", "setuid",
  /* time and system information */
  "alarm", "clock_getres", "clock_gettime", "clock_nanosleep", "getitimer", "gettimeofday",
  "nanosleep", "setitimer", "time", "timer_create", "timer_delete", "timer_getoverrun",
  "timer_gettime", "timer_settime", "times", "getcpu", "getrandom", "sysinfo", "uname",
  "sethostname", "setdomainname",
  /* asynchronous I/O (the old interface; io_uring is left out) and terminals */
  "io_cancel", "io_destroy", "io_getevents", "io_pgetevents", "io_setup", "io_submit", "ioctl",
  "vhangup",
};

/* The execution domains programs ask for: Linux, and Linux with address randomisation off
   (setarch -R) or with the 3 GiB layout, and the query (0xffffffff). */
static const unsigned long personalities[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };

#define NAMESPACE_FLAGS                                                                             \
  (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET |        \
   CLONE_NEWCGROUP | CLONE_NEWTIME)

int main(void) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (ctx == NULL) return 1;
  int failed = 0;
  for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
    int nr = seccomp_syscall_resolve_name(allowed[i]);
    if (nr == __NR_SCMP_ERROR) continue; /* not a system call of this architecture */
    if (seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) != 0) {
      fprintf(stderr, "seccomp-policy: cannot allow %s\n", allowed[i]);
      failed = 1;
    }
  }
  /* clone: threads and processes, never a new namespace. */
  failed |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, NAMESPACE_FLAGS, 0)) != 0;
  /* Every process but pid 1 (the pid is ptrace's second argument, the others' first). */
  failed |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ptrace), 1, SCMP_A1(SCMP_CMP_NE, 1)) != 0;
  failed |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(process_vm_readv), 1, SCMP_A0(SCMP_CMP_NE, 1)) != 0;
  failed |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(process_vm_writev), 1, SCMP_A0(SCMP_CMP_NE, 1)) != 0;
  failed |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(pidfd_open), 1, SCMP_A0(SCMP_CMP_NE, 1)) != 0;
  /* clone3 passes its flags in memory, out of a filter's sight. */
  failed |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0;
  for (size_t i = 0; i < sizeof personalities / sizeof personalities[0]; i++) {
    failed |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(personality), 1,
                               SCMP_A0(SCMP_CMP_EQ, personalities[i])) != 0;
  }
  if (failed) {
    fprintf(stderr, "seccomp-policy: libseccomp refused a rule\n");
    return 1;
  }
  if (seccomp_export_bpf(ctx, STDOUT_FILENO) != 0) return 1;
  seccomp_release(ctx);
  return 0;
}

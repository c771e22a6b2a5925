/*
 * Loaded into the agent's Node process (LD_PRELOAD) before anything of Node runs, so that no
 * process of the sandbox, all of which share the agent's uid, can reach into the agent:
 *
 * - PR_SET_DUMPABLE 0: the kernel then refuses ptrace, /proc/<agent>/mem, environ and fd, and
 *   pidfd_getfd to every process without CAP_SYS_PTRACE over the agent's user namespace, which
 *   nothing in a sandbox has. The host's root keeps it: the service still opens files through
 *   /proc/<agent>/fd (agent-descriptors.ts).
 * - Every descriptor above standard error is marked close-on-exec, above all the socket the
 *   host handed over: the programs the agent starts inherit none of them.
 * - LD_PRELOAD and AIEM_AGENT_GUARD_EXE leave the environment, so no program inherits them.
 *
 * It acts only in the program AIEM_AGENT_GUARD_EXE names (the node binary as the sandbox sees
 * it): a program run before it on the way (setpriv) must keep its descriptors for the agent.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void close_on_exec_above_stderr(void) {
  if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  /* Kernels before 5.11: one by one. */
  DIR *dir = opendir("/proc/self/fd");
  if (dir == NULL) return;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    int fd = atoi(entry->d_name);
    if (fd > 2 && fd != dirfd(dir)) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  closedir(dir);
}

__attribute__((constructor)) static void guard(void) {
  const char *wanted = getenv("AIEM_AGENT_GUARD_EXE");
  if (wanted == NULL) return;
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n < 0) return;
  exe[n] = '\0';
  if (strcmp(exe, wanted) != 0) return;
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  close_on_exec_above_stderr();
  unsetenv("LD_PRELOAD");
  unsetenv("AIEM_AGENT_GUARD_EXE");
}

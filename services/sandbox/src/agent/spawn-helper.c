/*
 * Spawn helper of the sandbox agent. Node cannot tell which real-time signal (32-64) killed a
 * child (it reports "exit code 0, no signal"), and it cannot run code between fork and exec, so
 * the agent starts every process through this helper, which:
 *   - forks, puts the child in a process group of its own, applies the per-process settings
 *     (OOM score, resource-limit fallbacks) in the child, and execs the program;
 *   - reports on fd 3: "started <pid>" once the exec succeeded, or "error <errno>" when it failed,
 *     then "exit <raw wait status>" when the program ended.
 * The helper closes its own stdin/stdout/stderr, so the output pipes reach end-of-file as soon as
 * the program and its descendants are done with them.
 *
 * Usage: spawn-helper [-a oom_score_adj] [-m rlimit_as] [-f rlimit_fsize] -- path argv0 [args...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char *kind, long value) {
  char line[64];
  int n = snprintf(line, sizeof line, "%s %ld\n", kind, value);
  if (n > 0) {
    ssize_t ignored = write(3, line, (size_t)n);
    (void)ignored;
  }
}

static void set_limit(int resource, const char *value) {
  if (value == NULL) return;
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = (rlim_t)strtoull(value, NULL, 10);
  setrlimit(resource, &rl);
}

int main(int argc, char **argv) {
  const char *oom = NULL, *mem = NULL, *fsize = NULL;
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) { i++; break; }
    if (i + 1 >= argc) return 120;
    if (strcmp(argv[i], "-a") == 0) oom = argv[++i];
    else if (strcmp(argv[i], "-m") == 0) mem = argv[++i];
    else if (strcmp(argv[i], "-f") == 0) fsize = argv[++i];
    else return 120;
  }
  if (argc - i < 2) return 120;
  const char *path = argv[i];
  char **child_argv = argv + i + 1;

  fcntl(3, F_SETFD, FD_CLOEXEC);
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) { report("error", errno); return 121; }

  pid_t pid = fork();
  if (pid < 0) { report("error", errno); return 121; }
  if (pid == 0) {
    close(errpipe[0]);
    setpgid(0, 0);
    if (oom != NULL) {
      int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        ssize_t ignored = write(fd, oom, strlen(oom));
        (void)ignored;
        close(fd);
      }
    }
    set_limit(RLIMIT_AS, mem);
    set_limit(RLIMIT_FSIZE, fsize);
    execv(path, child_argv);
    int e = errno;
    ssize_t ignored = write(errpipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }

  signal(SIGPIPE, SIG_IGN);
  close(errpipe[1]);
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
  }

  int exec_errno = 0;
  ssize_t n;
  do n = read(errpipe[0], &exec_errno, sizeof exec_errno); while (n < 0 && errno == EINTR);
  close(errpipe[0]);
  if (n == (ssize_t)sizeof exec_errno) report("error", exec_errno);
  else report("started", (long)pid);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) { status = 0x7f00; break; }
  }
  report("exit", status);
  return 0;
}

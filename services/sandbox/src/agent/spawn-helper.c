/*
 * Spawn helper of the sandbox agent. Node cannot tell which real-time signal (32-64) killed a
 * child (it reports "exit code 0, no signal"), and it cannot run code between fork and exec, so
 * the agent starts every process through this helper, which forks, makes the child a session and
 * process group of its own, applies the per-process settings (OOM score, resource-limit
 * fallbacks) in the child, and execs the program. Two modes:
 *
 * spawn-helper [-a oom_score_adj] [-m rlimit_as] [-f rlimit_fsize] --serve
 *   Resident: one helper per agent starts every process, so a start costs a fork of this small
 *   program instead of a fork of the agent's Node (whose fork grows with its memory) plus an
 *   exec of the helper. Requests come on fd 3 (a socket), each a 4-byte little-endian length and
 *   NUL-terminated fields:  S id path cwd argc argv... envc env...   (start a process)
 *                           C id                                     (forget its pipes)
 *   Answers go back on fd 3 as lines: "started <id> <pid> <stdout fd> <stderr fd>" once the
 *   exec succeeded (the agent opens the two pipes' read ends as /proc/<helper>/fd/<n>, then
 *   sends C, and the helper closes its own), "error <id> <errno>" when it failed, and
 *   "exit <id> <raw wait status>" when the program ended. End of file on fd 3 ends the helper;
 *   the programs it started keep running.
 *
 * spawn-helper [-a oom_score_adj] [-m rlimit_as] [-f rlimit_fsize] -- path argv0 [args...]
 *   One process: the helper's own stdout and stderr are the program's; it reports on fd 3
 *   "started <pid>" or "error <errno>", then "exit <raw wait status>", and closes its own
 *   stdin/stdout/stderr so the output pipes reach end-of-file as soon as the program and its
 *   descendants are done with them. The agent uses it where /proc does not lend it the pipes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

struct settings {
  const char *oom, *mem, *fsize;
};

static void write_all(int fd, const char *data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data += w;
    n -= (size_t)w;
  }
}

static void report(const char *kind, long value) {
  char line[64];
  int n = snprintf(line, sizeof line, "%s %ld\n", kind, value);
  if (n > 0) write_all(3, line, (size_t)n);
}

static void set_limit(int resource, const char *value) {
  if (value == NULL) return;
  struct rlimit rl;
  rl.rlim_cur = rl.rlim_max = (rlim_t)strtoull(value, NULL, 10);
  setrlimit(resource, &rl);
}

/* In the forked child: the settings every program gets, then the exec; on failure the errno goes
 * to errfd (close-on-exec, so the parent reads end-of-file exactly when the exec succeeded). */
static void exec_child(const struct settings *s, int errfd, const char *path, char **argv, char **envp) {
  if (s->oom != NULL) {
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      write_all(fd, s->oom, strlen(s->oom));
      close(fd);
    }
  }
  set_limit(RLIMIT_AS, s->mem);
  set_limit(RLIMIT_FSIZE, s->fsize);
  if (envp == NULL) execv(path, argv);
  else execve(path, argv, envp);
  int e = errno;
  write_all(errfd, (const char *)&e, sizeof e);
  _exit(127);
}

/* 0 when the exec succeeded, otherwise its errno. */
static int exec_result(int errfd) {
  int exec_errno = 0;
  ssize_t n;
  do n = read(errfd, &exec_errno, sizeof exec_errno); while (n < 0 && errno == EINTR);
  return n == (ssize_t)sizeof exec_errno ? exec_errno : 0;
}

static int run_one(const struct settings *s, const char *path, char **child_argv) {
  fcntl(3, F_SETFD, FD_CLOEXEC);
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0) { report("error", errno); return 121; }

  pid_t pid = fork();
  if (pid < 0) { report("error", errno); return 121; }
  if (pid == 0) {
    close(errpipe[0]);
    setpgid(0, 0);
    exec_child(s, errpipe[1], path, child_argv, NULL);
  }

  signal(SIGPIPE, SIG_IGN);
  close(errpipe[1]);
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd >= 0) {
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(null_fd, 2);
  }

  int exec_errno = exec_result(errpipe[0]);
  close(errpipe[0]);
  if (exec_errno != 0) report("error", exec_errno);
  else report("started", (long)pid);

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) { status = 0x7f00; break; }
  }
  report("exit", status);
  return 0;
}

/* ---- resident mode ---------------------------------------------------------------------------- */

struct child {
  pid_t pid;       /* 0 once its exit was reported */
  uint32_t id;
  int out, err;    /* the pipes' read ends, -1 once the agent has its own */
};

static struct child *children;
static size_t nchildren, capchildren;

static struct child *find_child(uint32_t id, pid_t pid) {
  for (size_t i = 0; i < nchildren; i++) {
    if (pid != 0 ? children[i].pid == pid : children[i].id == id) return &children[i];
  }
  return NULL;
}

static void drop_if_done(struct child *c) {
  if (c->pid != 0 || c->out >= 0 || c->err >= 0) return;
  *c = children[--nchildren];
}

static void answer(const char *format, uint32_t id, long a, long b, long c) {
  char line[96];
  int n = snprintf(line, sizeof line, format, (unsigned long)id, a, b, c);
  if (n > 0) write_all(3, line, (size_t)n);
}

/* Splits a request's NUL-terminated fields; NULL when one is missing. */
static char *next_field(char **at, char *end) {
  if (*at >= end) return NULL;
  char *field = *at;
  char *nul = memchr(field, '\0', (size_t)(end - field));
  if (nul == NULL) return NULL;
  *at = nul + 1;
  return field;
}

static char **field_list(char **at, char *end) {
  char *count = next_field(at, end);
  if (count == NULL) return NULL;
  size_t n = strtoul(count, NULL, 10);
  if (n > (size_t)(end - *at)) return NULL;
  char **list = calloc(n + 1, sizeof *list);
  if (list == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    if ((list[i] = next_field(at, end)) == NULL) {
      free(list);
      return NULL;
    }
  }
  return list;
}

static void start_child(const struct settings *s, const sigset_t *original, uint32_t id, char *at, char *end) {
  char *path = next_field(&at, end);
  char *cwd = next_field(&at, end);
  char **argv = field_list(&at, end);
  char **envp = argv ? field_list(&at, end) : NULL;
  int out[2] = {-1, -1}, err[2] = {-1, -1}, errpipe[2] = {-1, -1};
  if (path == NULL || cwd == NULL || argv == NULL || envp == NULL || argv[0] == NULL) {
    answer("error %lu %ld\n", id, EINVAL, 0, 0);
    goto done;
  }
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 || pipe2(errpipe, O_CLOEXEC) != 0) {
    answer("error %lu %ld\n", id, errno, 0, 0);
    goto done;
  }
  if (nchildren == capchildren) {
    size_t cap = capchildren ? capchildren * 2 : 64;
    struct child *grown = realloc(children, cap * sizeof *grown);
    if (grown == NULL) {
      answer("error %lu %ld\n", id, ENOMEM, 0, 0);
      goto done;
    }
    children = grown;
    capchildren = cap;
  }
  pid_t pid = fork();
  if (pid < 0) {
    answer("error %lu %ld\n", id, errno, 0, 0);
    goto done;
  }
  if (pid == 0) {
    setsid();
    /* Nothing of the helper's own signal handling may reach the program. */
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_SETMASK, original, NULL);
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0 || chdir(cwd) != 0) {
      int e = errno;
      write_all(errpipe[1], (const char *)&e, sizeof e);
      _exit(127);
    }
    if (null_fd > 2) close(null_fd);
    exec_child(s, errpipe[1], path, argv, envp);
  }
  close(errpipe[1]);
  errpipe[1] = -1;
  close(out[1]);
  close(err[1]);
  out[1] = err[1] = -1;
  int exec_errno = exec_result(errpipe[0]);
  if (exec_errno != 0) {
    /* Reaped by the SIGCHLD loop, which reports nothing for a pid it does not know. */
    answer("error %lu %ld\n", id, exec_errno, 0, 0);
    goto done;
  }
  children[nchildren++] = (struct child){.pid = pid, .id = id, .out = out[0], .err = err[0]};
  answer("started %lu %ld %ld %ld\n", id, pid, out[0], err[0]);
  out[0] = err[0] = -1;
done:
  for (int i = 0; i < 2; i++) {
    if (out[i] >= 0) close(out[i]);
    if (err[i] >= 0) close(err[i]);
    if (errpipe[i] >= 0) close(errpipe[i]);
  }
  free(argv);
  free(envp);
}

static void forget_pipes(uint32_t id) {
  struct child *c = find_child(id, 0);
  if (c == NULL) return;
  if (c->out >= 0) close(c->out);
  if (c->err >= 0) close(c->err);
  c->out = c->err = -1;
  drop_if_done(c);
}

static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    struct child *c = find_child(0, pid);
    if (c == NULL) continue;
    answer("exit %lu %ld\n", c->id, status, 0, 0);
    c->pid = 0;
    drop_if_done(c);
  }
}

static int serve(const struct settings *s) {
  fcntl(3, F_SETFD, FD_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld, original;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &original);
  int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) return 121;

  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  if (buf == NULL) return 121;
  for (;;) {
    struct pollfd fds[2] = {{.fd = 3, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return 121;
    }
    if (fds[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      while (read(sfd, &info, sizeof info) > 0) {
      }
      reap();
    }
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    if (len == cap) {
      char *grown = realloc(buf, cap * 2);
      if (grown == NULL) return 121;
      buf = grown;
      cap *= 2;
    }
    ssize_t n = read(3, buf + len, cap - len);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return 0;
    }
    len += (size_t)n;
    size_t at = 0;
    while (len - at >= 4) {
      uint32_t size;
      memcpy(&size, buf + at, 4);
      if (len - at - 4 < size) break;
      char *req = buf + at + 4, *end = req + size;
      if (size >= 5) {
        uint32_t id;
        memcpy(&id, req + 1, 4);
        if (req[0] == 'S') start_child(s, &original, id, req + 5, end);
        else if (req[0] == 'C') forget_pipes(id);
      }
      at += 4 + (size_t)size;
    }
    memmove(buf, buf + at, len - at);
    len -= at;
    /* A start blocks until its exec; children that ended meanwhile are reported now. */
    reap();
  }
}

int main(int argc, char **argv) {
  struct settings s = {NULL, NULL, NULL};
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) { i++; break; }
    if (strcmp(argv[i], "--serve") == 0) return serve(&s);
    if (i + 1 >= argc) return 120;
    if (strcmp(argv[i], "-a") == 0) s.oom = argv[++i];
    else if (strcmp(argv[i], "-m") == 0) s.mem = argv[++i];
    else if (strcmp(argv[i], "-f") == 0) s.fsize = argv[++i];
    else return 120;
  }
  if (argc - i < 2) return 120;
  return run_one(&s, argv[i], argv + i + 1);
}

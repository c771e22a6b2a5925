/*
 * The last host-side step before bubblewrap: moves the sandbox into a user namespace of its own,
 * in which its root is an unprivileged host uid/gid range, and makes the sandbox's files belong
 * to that range. Run as host root, after the cgroups were joined and the storage image mounted.
 *
 *   sandbox-enter <uid-base> <count> <root> -- program args...
 *
 * 1. When <root> (the directory that becomes the sandbox's `/`) is not owned by <uid-base>, every
 *    file under it (same filesystem only, links not followed) is shifted into the range: a file
 *    owned by the old range's uid k (or by host uid k < count, for files made before user
 *    namespaces) gets <uid-base> + k; anything else gets the range's "nobody". This runs once per
 *    sandbox (and again only if its range ever changes).
 * 2. A child stays behind in the host's namespace; this process unshares its user namespace, the
 *    child writes "0 <uid-base> <count>" into its uid_map and gid_map (only a process outside may
 *    map more than its own uid), and this process becomes the namespace's root and execs the
 *    program with every capability of that namespace and none of the host's.
 * Exit codes before the exec: 93 bad usage, 94 the shift failed, 95 the namespace failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long base, count, old_base;
static int shift_failed;

static unsigned long shifted(unsigned long id) {
  if (old_base != 0 && id >= old_base && id < old_base + count) return base + (id - old_base);
  if (old_base == 0 && id < count) return base + id;
  return base + (count > 65534 ? 65534 : count - 1);
}

static int shift_one(const char *file, const struct stat *st, int type, struct FTW *ftw) {
  (void)type;
  (void)ftw;
  if (lchown(file, (uid_t)shifted(st->st_uid), (gid_t)shifted(st->st_gid)) != 0) {
    fprintf(stderr, "sandbox-enter: cannot chown %s: %s\n", file, strerror(errno));
    shift_failed = 1;
    return 0;
  }
  /* chown clears set-user-ID and set-group-ID bits; keep the file's mode as it was. */
  if (!S_ISLNK(st->st_mode) && (st->st_mode & (S_ISUID | S_ISGID))) chmod(file, st->st_mode & 07777);
  return 0;
}

static int write_file(const char *file, const char *text) {
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = write(fd, text, strlen(text));
  close(fd);
  return n == (ssize_t)strlen(text) ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc < 6 || strcmp(argv[4], "--") != 0) {
    fprintf(stderr, "usage: sandbox-enter <uid-base> <count> <root> -- program args...\n");
    return 93;
  }
  base = strtoul(argv[1], NULL, 10);
  count = strtoul(argv[2], NULL, 10);
  const char *root = argv[3];
  if (base == 0 || count == 0) return 93;

  struct stat st;
  if (stat(root, &st) != 0) {
    fprintf(stderr, "sandbox-enter: %s: %s\n", root, strerror(errno));
    return 94;
  }
  if (st.st_uid != base) {
    old_base = st.st_uid >= count ? st.st_uid : 0;
    if (nftw(root, shift_one, 64, FTW_PHYS | FTW_MOUNT) != 0 || shift_failed) return 94;
  }

  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) return 95;
  pid_t parent = getpid();
  pid_t child = fork();
  if (child < 0) return 95;
  if (child == 0) {
    char ignored;
    close(go[1]);
    if (read(go[0], &ignored, 1) != 1) _exit(1);
    char file[64], map[96];
    snprintf(map, sizeof map, "0 %lu %lu\n", base, count);
    snprintf(file, sizeof file, "/proc/%d/uid_map", (int)parent);
    if (write_file(file, map) != 0) _exit(2);
    snprintf(file, sizeof file, "/proc/%d/gid_map", (int)parent);
    if (write_file(file, map) != 0) _exit(3);
    _exit(0);
  }
  close(go[0]);
  int unshared = unshare(CLONE_NEWUSER);
  if (write(go[1], "x", 1) != 1) unshared = -1;
  close(go[1]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (unshared != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "sandbox-enter: cannot set up the user namespace (%s, map writer %d)\n",
            unshared != 0 ? strerror(errno) : "unshared", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 95;
  }
  if (setgroups(0, NULL) != 0 || setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0) {
    fprintf(stderr, "sandbox-enter: cannot become the namespace's root: %s\n", strerror(errno));
    return 95;
  }
  execvp(argv[5], &argv[5]);
  fprintf(stderr, "sandbox-enter: cannot run %s: %s\n", argv[5], strerror(errno));
  return 95;
}

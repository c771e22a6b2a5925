/*
 * The host-side steps of a sandbox start before sandbox-enter and bubblewrap, in one process
 * (they were a shell running unshare, mount, rmdir, mount and cp: a fork and exec each, which is
 * what made up most of the chain's time). Run as host root.
 *
 *   sandbox-launch [--cgroup FILE]... [--image FILE | --new-image FILE [--premounted SOCKET]] [--etc ENTRY]...
 *                  [--socket-fd N] [--place DIR] --root DIR --stage DIR --boot DIR --args FILE --filter FILE
 *                  -- program args...
 *   sandbox-launch --premount IMAGE --hold SOCKET
 *
 * 1. Joins the sandbox's cgroups (each FILE a cgroup.procs). The kernel makes a write there wait
 *    for an RCU grace period (milliseconds), so a child writes this process's pid while this
 *    process makes its mount namespace and mounts the image and the stage; the stage is filled,
 *    and the program run, only once the child has succeeded, so that nothing of the sandbox
 *    starts outside its cgroups and the stage's memory is the sandbox's.
 * 2. Enters a mount namespace of its own, private, so nothing stays mounted on the host when the
 *    sandbox ends.
 * 3. Attaches the storage image to a free loop device (direct I/O where the kernel can; detached
 *    by the kernel once unmounted), or takes the one it is still attached to, and mounts it, ext4,
 *    at the root; removes mkfs's empty lost+found unless the image was made without. A --new-image
 *    was never mounted, so no device holds it: the look for one (a read of every loop device's
 *    backing file, a thousand of them on a machine with as many devices) is skipped.
 *    With --premounted, the image was mounted ahead, while no start waited (--premount below):
 *    the mount is taken from the process holding it and moved onto the root, after a check that
 *    it is the image's; when it cannot be had, the image is mounted here as without the option.
 * 4. Mounts the stage, a 16 MiB tmpfs, and copies the boot directory onto it (owners and modes
 *    kept, links as links): the agent's files and the sandbox's own /etc files, bound into the
 *    sandbox from there, so that mountinfo names no host path. Each ENTRY of the host's /etc the
 *    sandbox shares is bound read-only onto a place made for it in the stage's etc/, so that
 *    bubblewrap binds the whole /etc once: a bind in bubblewrap costs it a read of the whole
 *    mount table, here a few system calls.
 * 5. With --place, mounts a small tmpfs on DIR (an empty directory every user may pass through)
 *    and binds the root and the stage onto its root/ and stage/: bubblewrap, which runs as the
 *    sandbox's uid and resolves every source path itself, then reaches them there and never has
 *    to pass through the data directory, which may lie where that uid cannot (a 0700 home). Only
 *    in this process's mount namespace: on the host DIR stays empty. The /etc entries of step 4
 *    are then bound under DIR/stage/etc rather than under the stage, once rather than twice.
 * 6. Opens the arguments file as fd 3 and the seccomp filter as fd 4, marks every other
 *    descriptor above them close-on-exec (whatever the service inherited from its own parent must
 *    not reach a sandbox) but the agent's socket (--socket-fd, which the agent marks itself) and
 *    the binding descriptors, and execs the program.
 * --premount mounts a spare image ahead of the start that takes it: attached to a loop device
 * and mounted (ext4, nosuid, nodev) as a detached mount, in no mount namespace, so nothing is
 * mounted anywhere; then prints "ready", hands the mount to the first process that connects to
 * SOCKET (a unix socket it makes, mode 0600) and exits. Ended before that, it takes the mount
 * with it. A mount costs a loaded machine tens of milliseconds, mostly waiting on I/O.
 * Exit codes before the exec: 90 bad usage or no mount namespace, 91 a cgroup could not be joined,
 * 92 the image could not be mounted, 96 the stage could not be prepared or the program not run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CGROUPS 16
#define MAX_ETC 128

static int fail(int code, const char *what, const char *subject) {
  fprintf(stderr, "sandbox-launch: %s %s: %s\n", what, subject, strerror(errno));
  return code;
}

/* Writes this process's pid into each cgroup.procs file; the exit status of the joining child. */
static int join_cgroups(char **files, int count, pid_t pid) {
  char text[32];
  int length = snprintf(text, sizeof text, "%d\n", (int)pid);
  for (int i = 0; i < count; i++) {
    int fd = open(files[i], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, (size_t)length) != length) return fail(91, "cannot join", files[i]);
    close(fd);
  }
  return 0;
}

/*
 * A free loop device bound to the image (its path in `name`), or -1. The kernel detaches it after
 * the last unmount.
 */
static int attach_loop(const char *image, char *name, size_t size) {
  int backing = open(image, O_RDWR | O_CLOEXEC);
  if (backing < 0) return -1;
  int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (control < 0) {
    close(backing);
    return -1;
  }
  int device = -1;
  /* Another process may take the device found free before this one configures it: try again. */
  for (int attempt = 0; attempt < 20 && device < 0; attempt++) {
    int number = ioctl(control, LOOP_CTL_GET_FREE);
    if (number < 0) break;
    snprintf(name, size, "/dev/loop%d", number);
    int fd = open(name, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && mknod(name, S_IFBLK | 0660, makedev(7, number)) == 0) fd = open(name, O_RDWR | O_CLOEXEC);
    if (fd < 0) break;
    struct loop_config config;
    memset(&config, 0, sizeof config);
    config.fd = (unsigned)backing;
    /*
     * Direct I/O to the image: otherwise every page the sandbox writes is cached twice, in its
     * ext4 and again in the image file's pages, which the loop device's worker fills by copying
     * (a second GiB written into an image took 2-5 s that way, against 0.6-0.8 s direct). A
     * kernel that cannot do it for this file refuses the flag or leaves it off.
     */
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO;
    int done = ioctl(fd, LOOP_CONFIGURE, &config);
    if (done != 0 && errno == EINVAL) {
      config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
      done = ioctl(fd, LOOP_CONFIGURE, &config);
    }
    if (done != 0 && (errno == EINVAL || errno == ENOTTY)) {
      /* A kernel before 5.8: the two-step form. */
      done = ioctl(fd, LOOP_SET_FD, backing);
      if (done == 0) {
        struct loop_info64 info;
        memset(&info, 0, sizeof info);
        info.lo_flags = LO_FLAGS_AUTOCLEAR;
        if (ioctl(fd, LOOP_SET_STATUS64, &info) != 0) {
          ioctl(fd, LOOP_CLR_FD, 0);
          done = -1;
        } else {
          ioctl(fd, LOOP_SET_DIRECT_IO, 1UL);
        }
      }
    }
    if (done == 0) device = fd;
    else {
      int error = errno;
      close(fd);
      errno = error;
      if (error != EBUSY) break;
    }
  }
  int error = errno;
  close(control);
  close(backing);
  errno = error;
  return device;
}

/*
 * The loop device the image is attached to already (its path in `name`), or -1: a sandbox's
 * previous mount may still be going away. Mounting the same file through a second device would
 * give the kernel two ext4 file systems writing one image; through the same device the mount
 * shares the one superblock, as `mount -o loop` does it.
 */
static int find_loop(const char *image, char *name, size_t size) {
  struct stat st;
  char real[PATH_MAX];
  if (stat(image, &st) != 0 || realpath(image, real) == NULL) return -1;
  DIR *dir = opendir("/sys/block");
  if (dir == NULL) return -1;
  int device = -1;
  struct dirent *entry;
  while (device < 0 && (entry = readdir(dir)) != NULL) {
    if (strncmp(entry->d_name, "loop", 4) != 0) continue;
    char file[PATH_MAX], backing[PATH_MAX];
    snprintf(file, sizeof file, "/sys/block/%s/loop/backing_file", entry->d_name);
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ssize_t n = read(fd, backing, sizeof backing - 1);
    close(fd);
    if (n <= 0) continue;
    backing[n] = '\0';
    if (backing[n - 1] == '\n') backing[n - 1] = '\0';
    if (strcmp(backing, real) != 0) continue;
    snprintf(name, size, "/dev/%.40s", entry->d_name);
    fd = open(name, O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    struct loop_info64 info;
    if (ioctl(fd, LOOP_GET_STATUS64, &info) == 0 && info.lo_device == st.st_dev && info.lo_inode == st.st_ino && info.lo_offset == 0 &&
        info.lo_sizelimit == 0 && (info.lo_flags & LO_FLAGS_READ_ONLY) == 0) {
      device = fd;
    } else close(fd);
  }
  closedir(dir);
  return device;
}

static int mount_image(const char *image, const char *root, int fresh, int premounted) {
  char lost[PATH_MAX];
  snprintf(lost, sizeof lost, "%s/lost+found", root);
#ifdef FSOPEN_CLOEXEC
  if (premounted >= 0) {
    int moved = move_mount(premounted, "", AT_FDCWD, root, MOVE_MOUNT_F_EMPTY_PATH);
    close(premounted);
    if (moved == 0) {
      rmdir(lost);
      return 0;
    }
  }
#else
  (void)premounted;
#endif
  char name[64];
  int device = fresh ? -1 : find_loop(image, name, sizeof name);
  if (device < 0) device = attach_loop(image, name, sizeof name);
  if (device < 0) return fail(92, "cannot attach a loop device to", image);
  int mounted = mount(name, root, "ext4", MS_NOSUID | MS_NODEV, NULL);
  int error = errno;
  /* The mount holds the device now; closing it lets autoclear detach it at the unmount. */
  close(device);
  errno = error;
  if (mounted != 0) return fail(92, "cannot mount", image);
  rmdir(lost);
  return 0;
}

#ifdef FSOPEN_CLOEXEC
/* A unix socket address for `file`, bound or connected from its directory (sun_path is short). */
static int socket_in_dir(const char *file, struct sockaddr_un *address) {
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", file);
  char *slash = strrchr(dir, '/');
  const char *base = file;
  if (slash != NULL) {
    *slash = '\0';
    base = slash + 1;
    if (chdir(dir[0] == '\0' ? "/" : dir) != 0) return -1;
  }
  memset(address, 0, sizeof *address);
  address->sun_family = AF_UNIX;
  if (strlen(base) >= sizeof address->sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(address->sun_path, base);
  return 0;
}

/* --premount: the image mounted as a detached mount, handed over once through `hold`. */
static int premount(const char *image, const char *hold) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  char name[64];
  int device = attach_loop(image, name, sizeof name);
  if (device < 0) return fail(92, "cannot attach a loop device to", image);
  int fs = fsopen("ext4", FSOPEN_CLOEXEC);
  if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "source", name, 0) != 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) != 0) {
    return fail(92, "cannot mount", image);
  }
  int tree = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (tree < 0) return fail(92, "cannot mount", image);
  close(fs);
  /* The mount holds the device now; closing it lets autoclear detach it once the mount is gone. */
  close(device);
  struct sockaddr_un address;
  int server = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  umask(077);
  if (server < 0 || socket_in_dir(hold, &address) != 0 || bind(server, (struct sockaddr *)&address, sizeof address) != 0 ||
      listen(server, 1) != 0) {
    return fail(92, "cannot listen at", hold);
  }
  if (write(1, "ready\n", 6) != 6) return fail(92, "cannot say", "ready");
  for (;;) {
    int peer = accept4(server, NULL, NULL, SOCK_CLOEXEC);
    if (peer < 0) {
      if (errno == EINTR) continue;
      return fail(92, "cannot accept at", hold);
    }
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    /* Only host root (the launcher) takes it; the socket's mode already keeps others out. */
    if (getsockopt(peer, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0 || credentials.uid != 0) {
      close(peer);
      continue;
    }
    char byte = 'm';
    struct iovec data = {.iov_base = &byte, .iov_len = 1};
    union {
      char buffer[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &tree, sizeof(int));
    int sent = sendmsg(peer, &message, MSG_NOSIGNAL) == 1;
    close(peer);
    if (sent) return 0;
  }
}

/*
 * The mount held for `image` at `hold`, or -1: the holder gone, or its mount not of this image
 * (its loop device's backing file is not the image's inode).
 */
static int take_premount(const char *hold, const char *image) {
  char cwd[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == NULL) return -1;
  struct sockaddr_un address;
  int peer = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int ready = peer >= 0 && socket_in_dir(hold, &address) == 0 && connect(peer, (struct sockaddr *)&address, sizeof address) == 0;
  if (chdir(cwd) != 0) ready = 0;
  int tree = -1;
  if (ready) {
    char byte;
    struct iovec data = {.iov_base = &byte, .iov_len = 1};
    union {
      char buffer[CMSG_SPACE(sizeof(int))];
      struct cmsghdr align;
    } control;
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1, .msg_control = control.buffer, .msg_controllen = sizeof control.buffer};
    struct cmsghdr *header;
    if (recvmsg(peer, &message, MSG_CMSG_CLOEXEC) == 1 && (header = CMSG_FIRSTHDR(&message)) != NULL && header->cmsg_level == SOL_SOCKET &&
        header->cmsg_type == SCM_RIGHTS && header->cmsg_len == CMSG_LEN(sizeof(int))) {
      memcpy(&tree, CMSG_DATA(header), sizeof(int));
    }
  }
  if (peer >= 0) close(peer);
  unlink(hold);
  if (tree < 0) return -1;
  struct stat mounted, file;
  struct loop_info64 info;
  char name[64];
  int matches = 0;
  if (fstat(tree, &mounted) == 0 && stat(image, &file) == 0 && major(mounted.st_dev) == 7) {
    snprintf(name, sizeof name, "/dev/loop%u", minor(mounted.st_dev));
    int device = open(name, O_RDONLY | O_CLOEXEC);
    if (device >= 0) {
      matches = ioctl(device, LOOP_GET_STATUS64, &info) == 0 && info.lo_device == file.st_dev && info.lo_inode == file.st_ino;
      close(device);
    }
  }
  if (!matches) {
    close(tree);
    return -1;
  }
  return tree;
}
#else
static int premount(const char *image, const char *hold) {
  (void)hold;
  errno = ENOSYS;
  return fail(92, "cannot mount ahead (no detached mounts in this C library):", image);
}
static int take_premount(const char *hold, const char *image) {
  (void)image;
  unlink(hold);
  return -1;
}
#endif

static int copy_file(const char *from, const char *to, const struct stat *st) {
  int in = open(from, O_RDONLY | O_CLOEXEC);
  if (in < 0) return -1;
  int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st->st_mode & 07777);
  if (out < 0) {
    close(in);
    return -1;
  }
  off_t left = st->st_size;
  int ok = 1;
  while (left > 0 && ok) {
    ssize_t sent = sendfile(out, in, NULL, (size_t)left);
    if (sent > 0) left -= sent;
    else if (sent < 0 && errno == EINTR) continue;
    else ok = 0;
  }
  if (ok && (fchown(out, st->st_uid, st->st_gid) != 0 || fchmod(out, st->st_mode & 07777) != 0)) ok = 0;
  int error = errno;
  close(in);
  close(out);
  errno = error;
  return ok ? 0 : -1;
}

/* Copies the directory tree `from` into the existing directory `to`: directories and files only. */
static int copy_tree(const char *from, const char *to) {
  DIR *dir = opendir(from);
  if (dir == NULL) return fail(96, "cannot read", from);
  struct dirent *entry;
  int status = 0;
  while (status == 0 && (entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    char source[PATH_MAX], target[PATH_MAX];
    snprintf(source, sizeof source, "%s/%s", from, entry->d_name);
    snprintf(target, sizeof target, "%s/%s", to, entry->d_name);
    struct stat st;
    if (lstat(source, &st) != 0) status = fail(96, "cannot read", source);
    else if (S_ISDIR(st.st_mode)) {
      if (mkdir(target, st.st_mode & 07777) != 0 || lchown(target, st.st_uid, st.st_gid) != 0 || chmod(target, st.st_mode & 07777) != 0) {
        status = fail(96, "cannot make", target);
      } else status = copy_tree(source, target);
    } else if (S_ISREG(st.st_mode)) {
      if (copy_file(source, target, &st) != 0) status = fail(96, "cannot copy", source);
    } else if (S_ISLNK(st.st_mode)) {
      char link[PATH_MAX];
      ssize_t n = readlink(source, link, sizeof link - 1);
      if (n >= 0) link[n] = '\0';
      if (n < 0 || symlink(link, target) != 0 || lchown(target, st.st_uid, st.st_gid) != 0) status = fail(96, "cannot copy the link", source);
    } else {
      errno = EINVAL;
      status = fail(96, "neither a file, a directory nor a link:", source);
    }
  }
  closedir(dir);
  return status;
}

/*
 * Binds the host's /etc/<entry> read-only onto <stage>/etc/<entry>, made for it (with its parent
 * directories) as a directory or an empty file, as the entry's target is.
 */
static int share_etc(const char *stage, const char *entry) {
  if (entry[0] == '/' || strstr(entry, "..") != NULL) {
    errno = EINVAL;
    return fail(96, "cannot share", entry);
  }
  char source[PATH_MAX], target[PATH_MAX];
  snprintf(source, sizeof source, "/etc/%s", entry);
  snprintf(target, sizeof target, "%s/etc/%s", stage, entry);
  struct stat st;
  if (stat(source, &st) != 0) return fail(96, "cannot share", source);
  for (char *slash = strchr(target + strlen(stage) + 5, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    int made = mkdir(target, 0755);
    *slash = '/';
    if (made != 0 && errno != EEXIST) return fail(96, "cannot make the place of", source);
  }
  if (S_ISDIR(st.st_mode)) {
    if (mkdir(target, 0755) != 0) return fail(96, "cannot make the place of", source);
  } else {
    int fd = open(target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return fail(96, "cannot make the place of", source);
    close(fd);
  }
  if (mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0 ||
      mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0) {
    return fail(96, "cannot share", source);
  }
  return 0;
}

/* Marks every descriptor from `first` on close-on-exec. */
static void close_on_exec_from(int first) {
  if (close_range((unsigned)first, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  /* Kernels before 5.11: one by one. */
  DIR *dir = opendir("/proc/self/fd");
  if (dir == NULL) return;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    int fd = atoi(entry->d_name);
    if (fd >= first && fd != dirfd(dir)) fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  closedir(dir);
}

/* Opens `file` as descriptor `target`, inherited by the program. */
static int open_as(const char *file, int target) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fd == target) return fcntl(fd, F_SETFD, 0);
  int done = dup2(fd, target);
  close(fd);
  return done < 0 ? -1 : 0;
}

/* Mounts a tmpfs on `place` and binds `root` and `stage` (with what is mounted under them) onto its root/ and stage/. */
static int place_tree(const char *place, const char *root, const char *stage) {
  if (mount("aiem-place", place, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0) return fail(96, "cannot mount", place);
  const char *names[2] = {"root", "stage"};
  const char *sources[2] = {root, stage};
  for (int k = 0; k < 2; k++) {
    char target[PATH_MAX];
    snprintf(target, sizeof target, "%s/%s", place, names[k]);
    if (mkdir(target, 0755) != 0) return fail(96, "cannot make", target);
    if (mount(sources[k], target, NULL, MS_BIND | MS_REC, NULL) != 0) return fail(96, "cannot bind", sources[k]);
  }
  return 0;
}

int main(int argc, char **argv) {
  char *cgroups[MAX_CGROUPS];
  int cgroup_count = 0;
  char *etc[MAX_ETC];
  int etc_count = 0;
  const char *image = NULL, *root = NULL, *stage = NULL, *boot = NULL, *args = NULL, *filter = NULL;
  const char *place = NULL, *premounted = NULL;
  int socket_fd = -1;
  if (argc == 5 && strcmp(argv[1], "--premount") == 0 && strcmp(argv[3], "--hold") == 0) return premount(argv[2], argv[4]);
  int fresh_image = 0;
  int i = 1;
  for (; i + 1 < argc && strcmp(argv[i], "--") != 0; i += 2) {
    const char *flag = argv[i], *value = argv[i + 1];
    if (strcmp(flag, "--cgroup") == 0 && cgroup_count < MAX_CGROUPS) cgroups[cgroup_count++] = argv[i + 1];
    else if (strcmp(flag, "--etc") == 0 && etc_count < MAX_ETC) etc[etc_count++] = argv[i + 1];
    else if (strcmp(flag, "--image") == 0) image = value;
    else if (strcmp(flag, "--new-image") == 0) image = value, fresh_image = 1;
    else if (strcmp(flag, "--root") == 0) root = value;
    else if (strcmp(flag, "--stage") == 0) stage = value;
    else if (strcmp(flag, "--boot") == 0) boot = value;
    else if (strcmp(flag, "--args") == 0) args = value;
    else if (strcmp(flag, "--filter") == 0) filter = value;
    else if (strcmp(flag, "--socket-fd") == 0) socket_fd = atoi(value);
    else if (strcmp(flag, "--place") == 0) place = value;
    else if (strcmp(flag, "--premounted") == 0) premounted = value;
    else break;
  }
  if (i + 1 >= argc || strcmp(argv[i], "--") != 0 || !root || !stage || !boot || !args || !filter ||
      (socket_fd >= 0 && socket_fd < 5)) {
    fprintf(stderr, "usage: sandbox-launch [--cgroup FILE]... [--image FILE | --new-image FILE [--premounted SOCKET]] [--etc ENTRY]... [--socket-fd N>=5] [--place DIR] --root DIR --stage DIR --boot DIR --args FILE --filter FILE -- program args...\n"
                    "       sandbox-launch --premount IMAGE --hold SOCKET\n");
    return 90;
  }
  char **program = &argv[i + 1];

  pid_t joiner = -1;
  if (cgroup_count > 0) {
    pid_t self = getpid();
    joiner = fork();
    if (joiner < 0) return fail(91, "cannot fork to join", "the cgroups");
    if (joiner == 0) _exit(join_cgroups(cgroups, cgroup_count, self));
  }

  /*
   * Taken before anything else: the holder hands it over at once. Had it not been handed over,
   * the image may have been mounted through a device still going away: looked for as --image.
   */
  int tree = premounted != NULL && fresh_image && image != NULL ? take_premount(premounted, image) : -1;
  int status = 0;
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
    status = fail(90, "cannot make", "a mount namespace");
  }
  if (status == 0 && image != NULL && image[0] != '\0') status = mount_image(image, root, fresh_image && (premounted == NULL || tree >= 0), tree);
  if (status == 0 && mount("aiem-stage", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m") != 0) {
    status = fail(96, "cannot mount the stage at", stage);
  }
  if (joiner > 0) {
    int joined = 0;
    while (waitpid(joiner, &joined, 0) < 0 && errno == EINTR) {
    }
    if (status == 0 && (!WIFEXITED(joined) || WEXITSTATUS(joined) != 0)) status = 91;
  }
  /* After the join: the stage's pages are charged to the sandbox's memory, as the kernel charges
   * a tmpfs page to the cgroup of the process that writes it. */
  if (status == 0) {
    char source[PATH_MAX];
    snprintf(source, sizeof source, "%s/stage", boot);
    status = copy_tree(source, stage);
  }
  /*
   * With a place, the /etc entries are bound under the placed stage only, after it was bound
   * there: bound before, each would be in the namespace twice (the bind of the stage copies
   * them), and every mount in it costs bubblewrap, which copies the table and reads it after
   * each of its own binds (a twelfth of the chain's CPU).
   */
  if (status == 0 && place != NULL) status = place_tree(place, root, stage);
  char etc_stage[PATH_MAX];
  snprintf(etc_stage, sizeof etc_stage, "%s/stage", place != NULL ? place : "");
  for (int e = 0; status == 0 && e < etc_count; e++) status = share_etc(place != NULL ? etc_stage : stage, etc[e]);
  if (status != 0) return status;
  if (open_as(args, 3) != 0) return fail(96, "cannot open", args);
  if (open_as(filter, 4) != 0) return fail(96, "cannot open", filter);
  close_on_exec_from(5);
  if (socket_fd >= 0 && fcntl(socket_fd, F_SETFD, 0) != 0) return fail(96, "cannot pass on", "the agent's socket");
  execvp(program[0], program);
  return fail(96, "cannot run", program[0]);
}

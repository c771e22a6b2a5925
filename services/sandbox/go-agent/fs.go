// The agent's filesystem calls. Every path is resolved one segment at a time from an open
// directory: each step opens the next directory with O_NOFOLLOW through /proc/self/fd/<fd>/<name>
// (the equivalent of openat), and the agent follows symbolic links itself, reading absolute
// targets from the sandbox root and refusing a `..` that would climb above it. The directory
// holding the final entry stays open while the call works on it, so swapping a directory for a
// symbolic link between a check and its use cannot send the call anywhere else.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	oDir        = syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	maxSymlinks = 40
	dirMode     = 0o755
	fileMode    = 0o644
)

func at(fd int, name string) string {
	if name == "" {
		return "/proc/self/fd/" + strconv.Itoa(fd)
	}
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + name
}

func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return 0
}

// fsErrors say what a failed file system call means to a client: the API's code, and the words
// after the sandbox path.
var fsErrors = map[syscall.Errno]struct {
	code int
	text string
}{
	syscall.ENOENT:       {codeNotFound, "no such file or directory"},
	syscall.EEXIST:       {codeAlreadyExists, "already exists"},
	syscall.ENOTDIR:      {codeFailedPrecondition, "a parent is not a directory"},
	syscall.EISDIR:       {codeFailedPrecondition, "is a directory"},
	syscall.ENOTEMPTY:    {codeFailedPrecondition, "directory is not empty"},
	syscall.ELOOP:        {codeFailedPrecondition, "too many levels of symbolic links"},
	syscall.EXDEV:        {codeFailedPrecondition, "cannot move across filesystems"},
	syscall.EBUSY:        {codePermissionDenied, "is in use by the system"},
	syscall.EACCES:       {codePermissionDenied, "permission denied"},
	syscall.EPERM:        {codePermissionDenied, "permission denied"},
	syscall.EROFS:        {codePermissionDenied, "permission denied"},
	syscall.ENOSPC:       {codeResourceExhausted, "the sandbox's storage is full"},
	syscall.EDQUOT:       {codeResourceExhausted, "the sandbox's storage is full"},
	syscall.EFBIG:        {codeResourceExhausted, "the sandbox's storage is full"},
	syscall.EINVAL:       {codeInvalidArgument, "invalid argument"},
	syscall.ENAMETOOLONG: {codeInvalidArgument, "name too long"},
}

// fsError turns a failed system call on the sandbox path `path` into an API error that names
// sandbox paths only.
func fsError(err error, path string) error {
	var re *rpcError
	if errors.As(err, &re) {
		return re
	}
	errno := errnoOf(err)
	if known, ok := fsErrors[errno]; ok {
		return errorf(known.code, "%s: %s", path, known.text)
	}
	if errno == 0 {
		return errorf(codeInternal, "%s: unexpected error", path)
	}
	return errorf(codeInternal, "%s: %s", path, errnoName(errno))
}

func errnoName(errno syscall.Errno) string { return "errno " + strconv.Itoa(int(errno)) }

func lstat(path string) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		if err == syscall.ENOENT {
			return nil, nil
		}
		return nil, err
	}
	return &st, nil
}

func fileKind(mode uint32) int {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 1
	case syscall.S_IFDIR:
		return 2
	case syscall.S_IFLNK:
		return 3
	}
	return 0
}

// entryToChange is the path of the entry a call is about to change at loc and its status (nil
// when there is none yet). The sandbox root itself is refused with atRoot, read-only places as
// denyReadOnly says.
func entryToChange(loc location, display string, atRoot error) (string, *syscall.Stat_t, error) {
	if loc.name == "" {
		return "", nil, atRoot
	}
	if err := denyReadOnly(loc.canonical, display); err != nil {
		return "", nil, err
	}
	target := loc.entryPath()
	st, err := lstat(target)
	if err != nil {
		return "", nil, fsError(err, display)
	}
	return target, st, nil
}

// statAfter describes the entry a call has just `made` at path: only someone removing it at once
// can have made it missing.
func statAfter(path, display, made string) (fileInfo, error) {
	st, err := lstat(path)
	if err != nil || st == nil {
		return fileInfo{}, errorf(codeNotFound, "%s: removed right after it was %s", display, made)
	}
	return toFileInfo(display, st), nil
}

func toFileInfo(path string, st *syscall.Stat_t) fileInfo {
	return fileInfo{path: path, size: st.Size, kind: fileKind(st.Mode), modTime: time.Unix(st.Mtim.Sec, st.Mtim.Nsec), mode: st.Mode}
}

// location is where a resolved path ends: the open directory holding the entry, and its name.
type location struct {
	parent    int
	name      string // "" for the sandbox root
	canonical []string
}

func (l location) entryPath() string { return at(l.parent, l.name) }

type resolveOptions struct {
	followFinal   bool
	createParents bool
	display       string
}

type filesystem struct {
	root         string
	maxReadBytes int64
	maxFileBytes int64 // 0: none
}

func (f *filesystem) resolve(segments []string, opts resolveOptions) (loc location, err error) {
	rootFd, err := syscall.Open(f.root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return location{}, fsError(err, opts.display)
	}
	type entry struct {
		fd   int
		name string
	}
	stack := []entry{{rootFd, ""}}
	queue := append([]string(nil), segments...)
	links := 0
	canonicalOf := func(name string) []string {
		names := []string{}
		for _, e := range stack[1:] {
			names = append(names, e.name)
		}
		if name != "" {
			names = append(names, name)
		}
		return names
	}
	finish := func(name string) location {
		canonical := canonicalOf(name)
		top := stack[len(stack)-1]
		for _, e := range stack[:len(stack)-1] {
			syscall.Close(e.fd)
		}
		stack = nil
		return location{parent: top.fd, name: name, canonical: canonical}
	}
	defer func() {
		for _, e := range stack {
			syscall.Close(e.fd)
		}
	}()
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		if name == "" || name == "." {
			continue
		}
		if name == ".." {
			if len(stack) == 1 {
				return location{}, errorf(codePermissionDenied, "%s: a symbolic link points outside the sandbox", opts.display)
			}
			syscall.Close(stack[len(stack)-1].fd)
			stack = stack[:len(stack)-1]
			continue
		}
		isFinal := len(queue) == 0
		top := stack[len(stack)-1].fd
		if isFinal && !opts.followFinal {
			return finish(name), nil
		}
		fd, err := syscall.Open(at(top, name), oDir, 0)
		if err == nil {
			stack = append(stack, entry{fd, name})
			continue
		}
		switch err {
		case syscall.ENOENT:
			if isFinal {
				return finish(name), nil
			}
			if !opts.createParents {
				return location{}, errorf(codeNotFound, "%s: parent directory %s does not exist", opts.display, joinSegments(canonicalOf(name)))
			}
			if isReadOnlySystemPath(canonicalOf(name)) {
				return location{}, errorf(codePermissionDenied, "%s: permission denied", opts.display)
			}
			if err := syscall.Mkdir(at(top, name), dirMode); err != nil && err != syscall.EEXIST {
				return location{}, fsError(err, opts.display)
			} else if err == nil {
				if fd, err := syscall.Open(at(top, name), oDir, 0); err == nil {
					_ = syscall.Fchmod(fd, dirMode)
					syscall.Close(fd)
				}
			}
			queue = append([]string{name}, queue...)
		case syscall.ELOOP, syscall.ENOTDIR:
			st, err := lstat(at(top, name))
			if err != nil {
				return location{}, fsError(err, opts.display)
			}
			if st == nil {
				queue = append([]string{name}, queue...)
				continue
			}
			if st.Mode&syscall.S_IFMT == syscall.S_IFLNK {
				links++
				if links > maxSymlinks {
					return location{}, errorf(codeFailedPrecondition, "%s: too many levels of symbolic links", opts.display)
				}
				target, err := os.Readlink(at(top, name))
				if err != nil {
					if e := errnoOf(err); e == syscall.ENOENT || e == syscall.EINVAL {
						queue = append([]string{name}, queue...)
						continue
					}
					return location{}, fsError(err, opts.display)
				}
				if strings.HasPrefix(target, "/") {
					// Absolute targets start at the sandbox root, as for the sandbox's processes.
					for _, e := range stack[1:] {
						syscall.Close(e.fd)
					}
					stack = stack[:1]
				}
				queue = append(strings.Split(target, "/"), queue...)
				continue
			}
			if isFinal {
				return finish(name), nil
			}
			return location{}, errorf(codeFailedPrecondition, "%s: %s is not a directory", opts.display, joinSegments(canonicalOf(name)))
		case syscall.EACCES, syscall.EPERM:
			return location{}, errorf(codePermissionDenied, "%s: permission denied", opts.display)
		default:
			return location{}, fsError(err, opts.display)
		}
	}
	if len(stack) == 1 {
		return finish(""), nil
	}
	last := stack[len(stack)-1]
	syscall.Close(last.fd)
	stack = stack[:len(stack)-1]
	return finish(last.name), nil
}

func (f *filesystem) withLocation(segments []string, opts resolveOptions, fn func(location) error) error {
	loc, err := f.resolve(segments, opts)
	if err != nil {
		return err
	}
	defer syscall.Close(loc.parent)
	return fn(loc)
}

func denyAgentDir(loc location, display string) error {
	if isAgentPath(loc.canonical) {
		return errorf(codePermissionDenied, "%s: permission denied", display)
	}
	return nil
}

func denyReadOnly(canonical []string, display string) error {
	if isReadOnlySystemPath(canonical) {
		return errorf(codePermissionDenied, "%s: is in a read-only system directory", display)
	}
	return nil
}

func displayOf(path, name string) ([]string, string, error) {
	segments, err := pathSegments(path, name)
	if err != nil {
		return nil, "", err
	}
	return segments, joinSegments(segments), nil
}

func (f *filesystem) stat(path string) (fileInfo, error) {
	segments, display, err := displayOf(path, "path")
	if err != nil {
		return fileInfo{}, err
	}
	var out fileInfo
	err = f.withLocation(segments, resolveOptions{display: display}, func(loc location) error {
		if err := denyAgentDir(loc, display); err != nil {
			return err
		}
		var st *syscall.Stat_t
		if loc.name == "" {
			st = new(syscall.Stat_t)
			if err := syscall.Fstat(loc.parent, st); err != nil {
				return fsError(err, display)
			}
		} else if st, err = lstat(loc.entryPath()); err != nil {
			return fsError(err, display)
		}
		if st == nil {
			return errorf(codeNotFound, "%s: no such file or directory", display)
		}
		out = toFileInfo(display, st)
		return nil
	})
	return out, err
}

func (f *filesystem) listDirectory(path string) ([]fileInfo, error) {
	segments, display, err := displayOf(path, "path")
	if err != nil {
		return nil, err
	}
	var out []fileInfo
	err = f.withLocation(segments, resolveOptions{followFinal: true, display: display}, func(loc location) error {
		if err := denyAgentDir(loc, display); err != nil {
			return err
		}
		var dir int
		var err error
		if loc.name == "" {
			dir, err = syscall.Open(at(loc.parent, ""), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		} else {
			dir, err = syscall.Open(loc.entryPath(), oDir, 0)
		}
		if err != nil {
			if err == syscall.ENOTDIR || err == syscall.ELOOP {
				return errorf(codeFailedPrecondition, "%s: is not a directory", display)
			}
			return fsError(err, display)
		}
		d := os.NewFile(uintptr(dir), "dir")
		defer d.Close()
		names, err := d.Readdirnames(-1)
		if err != nil {
			return fsError(err, display)
		}
		out = make([]fileInfo, 0, len(names))
		for _, name := range names {
			if len(loc.canonical) == 0 && name == agentDir {
				continue
			}
			st, err := lstat(at(dir, name))
			if err != nil || st == nil {
				continue
			}
			out = append(out, toFileInfo(joinSegments(append(append([]string(nil), segments...), name)), st))
		}
		return nil
	})
	return out, err
}

func fstat(fd int) (*syscall.Stat_t, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

func (f *filesystem) makeDirectory(path string, createParents, existOK bool) (fileInfo, error) {
	segments, display, err := displayOf(path, "path")
	if err != nil {
		return fileInfo{}, err
	}
	var out fileInfo
	retry := false
	err = f.withLocation(segments, resolveOptions{createParents: createParents, display: display}, func(loc location) error {
		if loc.name == "" {
			if existOK {
				st, err := fstat(loc.parent)
				if err != nil {
					return fsError(err, display)
				}
				out = toFileInfo(display, st)
				return nil
			}
			return errorf(codeAlreadyExists, "%s: already exists", display)
		}
		if err := denyAgentDir(loc, display); err != nil {
			return err
		}
		existing, err := lstat(loc.entryPath())
		if err != nil {
			return fsError(err, display)
		}
		if existing != nil {
			if existOK {
				if existing.Mode&syscall.S_IFMT == syscall.S_IFDIR {
					out = toFileInfo(display, existing)
					return nil
				}
				if existing.Mode&syscall.S_IFMT == syscall.S_IFLNK {
					if st, err := f.statFollowing(segments, display); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
						out = toFileInfo(display, st)
						return nil
					}
				}
			}
			return errorf(codeAlreadyExists, "%s: already exists", display)
		}
		if err := denyReadOnly(loc.canonical, display); err != nil {
			return err
		}
		if err := syscall.Mkdir(loc.entryPath(), dirMode); err != nil {
			if err == syscall.EEXIST && existOK {
				retry = true
				return nil
			}
			return fsError(err, display)
		}
		fd, err := syscall.Open(loc.entryPath(), oDir, 0)
		if err != nil {
			return fsError(err, display)
		}
		defer syscall.Close(fd)
		_ = syscall.Fchmod(fd, dirMode)
		st, err := fstat(fd)
		if err != nil {
			return fsError(err, display)
		}
		out = toFileInfo(display, st)
		return nil
	})
	if retry {
		return f.makeDirectory(path, createParents, existOK)
	}
	return out, err
}

func (f *filesystem) statFollowing(segments []string, display string) (*syscall.Stat_t, error) {
	var out *syscall.Stat_t
	err := f.withLocation(segments, resolveOptions{followFinal: true, display: display}, func(loc location) error {
		st, err := lstat(loc.entryPath())
		if err != nil {
			return fsError(err, display)
		}
		if st == nil {
			return errorf(codeNotFound, "%s: no such file or directory", display)
		}
		out = st
		return nil
	})
	return out, err
}

// contentSource fills the temporary file of a write: from bytes, a stream or a writer outside
// the agent (the descriptor route), through the file's descriptor.
type contentSource func(file *os.File, display string) error

func bytesSource(content []byte) contentSource {
	return func(file *os.File, _ string) error {
		_, err := file.Write(content)
		return err
	}
}

func randomName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return ".aiem-tmp-" + hex.EncodeToString(b[:])
}

// writeFile writes a whole file through a temporary file renamed (or linked) into place.
func (f *filesystem) writeFile(path string, fill contentSource, createParents, overwrite bool, mode *uint32) (fileInfo, error) {
	if mode != nil && *mode > 0o7777 {
		return fileInfo{}, errorf(codeInvalidArgument, "mode: must be between 0 and octal 07777")
	}
	segments, display, err := displayOf(path, "path")
	if err != nil {
		return fileInfo{}, err
	}
	if len(segments) == 0 {
		return fileInfo{}, errorf(codeFailedPrecondition, "%s: is a directory", display)
	}
	var out fileInfo
	err = f.withLocation(segments, resolveOptions{followFinal: true, createParents: createParents, display: display}, func(loc location) error {
		target, existing, err := entryToChange(loc, display, errorf(codeFailedPrecondition, "%s: is a directory", display))
		if err != nil {
			return err
		}
		if existing != nil {
			switch existing.Mode & syscall.S_IFMT {
			case syscall.S_IFDIR:
				return errorf(codeFailedPrecondition, "%s: is a directory", display)
			case syscall.S_IFLNK:
				return errorf(codeFailedPrecondition, "%s: changed while it was being written; try again", display)
			case syscall.S_IFREG:
			default:
				return errorf(codeFailedPrecondition, "%s: is not a regular file", display)
			}
			if !overwrite {
				return errorf(codeAlreadyExists, "%s: already exists", display)
			}
		}
		finalMode := uint32(fileMode)
		if mode != nil {
			finalMode = *mode
		} else if existing != nil {
			finalMode = existing.Mode & 0o7777
		}
		tempPath := at(loc.parent, randomName())
		fd, err := syscall.Open(tempPath, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if err != nil {
			return fsError(err, display)
		}
		linked := false
		defer func() {
			if !linked {
				_ = syscall.Unlink(tempPath)
			}
		}()
		file := os.NewFile(uintptr(fd), "temp")
		werr := fill(file, display)
		if werr == nil && f.maxFileBytes > 0 {
			if st, err := fstat(fd); err == nil && st.Size > f.maxFileBytes {
				werr = errorf(codeResourceExhausted, "%s: larger than the sandbox's file size limit of %d bytes", display, f.maxFileBytes)
			}
		}
		if werr == nil {
			werr = syscall.Fchmod(fd, finalMode)
		}
		file.Close()
		if werr != nil {
			return fsError(werr, display)
		}
		if overwrite {
			if err := syscall.Rename(tempPath, target); err != nil {
				return fsError(err, display)
			}
			linked = true
		} else if err := syscall.Link(tempPath, target); err != nil {
			// link() refuses an existing destination atomically.
			if err == syscall.EEXIST {
				return errorf(codeAlreadyExists, "%s: already exists", display)
			}
			if err != syscall.EPERM && err != syscall.ENOTSUP && err != syscall.EOPNOTSUPP {
				return fsError(err, display)
			}
			if st, _ := lstat(target); st != nil {
				return errorf(codeAlreadyExists, "%s: already exists", display)
			}
			if err := syscall.Rename(tempPath, target); err != nil {
				return fsError(err, display)
			}
			linked = true
		}
		info, err := statAfter(target, display, "written")
		out = info
		return err
	})
	return out, err
}

// openForRead resolves and opens a regular file for reading, with the checks every read
// makes. The caller closes the file.
func (f *filesystem) openForRead(path string) (*os.File, string, *syscall.Stat_t, error) {
	segments, display, err := displayOf(path, "path")
	if err != nil {
		return nil, "", nil, err
	}
	var file *os.File
	var st *syscall.Stat_t
	err = f.withLocation(segments, resolveOptions{followFinal: true, display: display}, func(loc location) error {
		if err := denyAgentDir(loc, display); err != nil {
			return err
		}
		if loc.name == "" {
			return errorf(codeFailedPrecondition, "%s: is not a regular file", display)
		}
		pre, err := lstat(loc.entryPath())
		if err != nil {
			return fsError(err, display)
		}
		if pre == nil {
			return errorf(codeNotFound, "%s: no such file or directory", display)
		}
		if pre.Mode&syscall.S_IFMT != syscall.S_IFREG {
			return errorf(codeFailedPrecondition, "%s: is not a regular file", display)
		}
		// O_NONBLOCK: should the entry be swapped for a named pipe, opening it must not hang.
		fd, err := syscall.Open(loc.entryPath(), syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			if err == syscall.ELOOP {
				return errorf(codeFailedPrecondition, "%s: is not a regular file", display)
			}
			return fsError(err, display)
		}
		s, err := fstat(fd)
		if err != nil || s.Mode&syscall.S_IFMT != syscall.S_IFREG {
			syscall.Close(fd)
			return errorf(codeFailedPrecondition, "%s: is not a regular file", display)
		}
		// Reads are blocking from here on (a regular file ignores O_NONBLOCK anyway).
		file, st = os.NewFile(uintptr(fd), display), s
		return nil
	})
	return file, display, st, err
}

func (f *filesystem) readFile(path string, offset, limit int64) ([]byte, bool, *fileInfo, error) {
	if offset < 0 {
		return nil, false, nil, errorf(codeInvalidArgument, "offset: must not be negative")
	}
	if limit < 0 {
		return nil, false, nil, errorf(codeInvalidArgument, "limit: must not be negative")
	}
	file, display, st, err := f.openForRead(path)
	if err != nil {
		return nil, false, nil, err
	}
	defer file.Close()
	want := f.maxReadBytes
	if limit > 0 && limit < want {
		want = limit
	}
	expected := want
	if st.Size > 0 {
		expected = max(0, min(want, st.Size-offset))
	}
	buf := make([]byte, expected)
	got := 0
	for int64(got) < expected {
		n, err := file.ReadAt(buf[got:], offset+int64(got))
		got += n
		if err == io.EOF || n == 0 {
			break
		}
		if err != nil {
			return nil, false, nil, fsError(err, display)
		}
	}
	eof := int64(got) < want || (st.Size > 0 && offset+int64(got) >= st.Size)
	var info *fileInfo
	if offset == 0 {
		fi := toFileInfo(display, st)
		info = &fi
	}
	return buf[:got], eof, info, nil
}

func (f *filesystem) removeTree(parent int, name string) error {
	dir, err := syscall.Open(at(parent, name), oDir, 0)
	if err != nil {
		if err == syscall.ENOENT {
			return nil
		}
		if err == syscall.ELOOP || err == syscall.ENOTDIR {
			// No longer a directory: remove the entry itself, never what it points to.
			return syscall.Unlink(at(parent, name))
		}
		return err
	}
	d := os.NewFile(uintptr(dir), "dir")
	names, err := d.Readdirnames(-1)
	if err != nil {
		d.Close()
		return err
	}
	for _, entry := range names {
		st, err := lstat(at(dir, entry))
		if err != nil || st == nil {
			continue
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			err = f.removeTree(dir, entry)
		} else {
			err = syscall.Unlink(at(dir, entry))
		}
		if err != nil && err != syscall.ENOENT {
			d.Close()
			return err
		}
	}
	d.Close()
	return syscall.Rmdir(at(parent, name))
}

func (f *filesystem) remove(path string, recursive bool) error {
	segments, display, err := displayOf(path, "path")
	if err != nil {
		return err
	}
	if len(segments) == 0 {
		return errorf(codeInvalidArgument, "path: cannot remove the sandbox root")
	}
	return f.withLocation(segments, resolveOptions{display: display}, func(loc location) error {
		target, st, err := entryToChange(loc, display, errorf(codeInvalidArgument, "path: cannot remove the sandbox root"))
		if err != nil {
			return err
		}
		if st == nil {
			return errorf(codeNotFound, "%s: no such file or directory", display)
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			return fsErrorOrNil(syscall.Unlink(target), display)
		}
		err = syscall.Rmdir(target)
		if err == nil {
			return nil
		}
		if err != syscall.ENOTEMPTY && err != syscall.EEXIST {
			return fsError(err, display)
		}
		if !recursive {
			return errorf(codeFailedPrecondition, "%s: directory is not empty; set recursive to remove it", display)
		}
		return fsErrorOrNil(f.removeTree(loc.parent, loc.name), display)
	})
}

func fsErrorOrNil(err error, display string) error {
	if err == nil {
		return nil
	}
	return fsError(err, display)
}

func sameSegments(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (f *filesystem) move(source, destination string, overwrite, createParents bool) (fileInfo, error) {
	src, srcDisplay, err := displayOf(source, "source")
	if err != nil {
		return fileInfo{}, err
	}
	dst, dstDisplay, err := displayOf(destination, "destination")
	if err != nil {
		return fileInfo{}, err
	}
	if len(src) == 0 {
		return fileInfo{}, errorf(codeInvalidArgument, "source: cannot move the sandbox root")
	}
	if len(dst) == 0 {
		return fileInfo{}, errorf(codeInvalidArgument, "destination: cannot replace the sandbox root")
	}
	var out fileInfo
	err = f.withLocation(src, resolveOptions{display: srcDisplay}, func(from location) error {
		if from.name == "" {
			return errorf(codeInvalidArgument, "source: cannot move the sandbox root")
		}
		if err := denyReadOnly(from.canonical, srcDisplay); err != nil {
			return err
		}
		srcSt, err := lstat(from.entryPath())
		if err != nil {
			return fsError(err, srcDisplay)
		}
		if srcSt == nil {
			return errorf(codeNotFound, "%s: no such file or directory", srcDisplay)
		}
		srcDir := srcSt.Mode&syscall.S_IFMT == syscall.S_IFDIR
		return f.withLocation(dst, resolveOptions{createParents: createParents, display: dstDisplay}, func(to location) error {
			if to.name == "" {
				return errorf(codeInvalidArgument, "destination: cannot replace the sandbox root")
			}
			if err := denyReadOnly(to.canonical, dstDisplay); err != nil {
				return err
			}
			dstPath := to.entryPath()
			if !sameSegments(to.canonical, from.canonical) {
				if srcDir && len(to.canonical) > len(from.canonical) && sameSegments(from.canonical, to.canonical[:len(from.canonical)]) {
					return errorf(codeInvalidArgument, "destination: cannot move %s into itself", srcDisplay)
				}
				dstSt, err := lstat(dstPath)
				if err != nil {
					return fsError(err, dstDisplay)
				}
				if dstSt != nil {
					if !overwrite {
						return errorf(codeAlreadyExists, "%s: already exists", dstDisplay)
					}
					dstDir := dstSt.Mode&syscall.S_IFMT == syscall.S_IFDIR
					if srcDir && !dstDir {
						return errorf(codeFailedPrecondition, "%s: cannot replace a file with a directory", dstDisplay)
					}
					if !srcDir && dstDir {
						return errorf(codeFailedPrecondition, "%s: cannot replace a directory with a file", dstDisplay)
					}
				}
				if err := syscall.Rename(from.entryPath(), dstPath); err != nil {
					switch err {
					case syscall.ENOTEMPTY, syscall.EEXIST:
						return errorf(codeFailedPrecondition, "%s: cannot replace a directory that is not empty", dstDisplay)
					case syscall.EINVAL:
						return errorf(codeInvalidArgument, "destination: cannot move %s into itself", srcDisplay)
					case syscall.ENOTDIR, syscall.EISDIR:
						return errorf(codeFailedPrecondition, "%s: cannot replace a directory with a file or the reverse", dstDisplay)
					case syscall.ENOENT:
						return fsError(err, srcDisplay)
					}
					return fsError(err, dstDisplay)
				}
			}
			info, err := statAfter(dstPath, dstDisplay, "moved")
			out = info
			return err
		})
	})
	return out, err
}

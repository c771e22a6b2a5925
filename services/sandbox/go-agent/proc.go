// The agent's process table. Programs are started directly (fork and exec, in a session of
// their own) with their output on two pipes that are read continuously into the process's log,
// whether or not anyone listens, so no program ever blocks on a full pipe. One reaper collects
// every child that ends, orphans included (the agent is the sandbox's subreaper); it never runs
// while a child is being started, so every pid it reaps is either a known process or an orphan.
package main

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// execHelperName is argv[0] of the agent run as the exec helper (see runExecHelper).
const execHelperName = "aiem-exec"

type exitInfo struct {
	code   int32
	signal int32 // 0: exited by itself
	end    time.Time
}

type process struct {
	id   string
	pid  int
	log  *outputLog
	done chan struct{}
	exit *exitInfo // set before done is closed
}

func (p *process) exited() *exitInfo {
	select {
	case <-p.done:
		return p.exit
	default:
		return nil
	}
}

type processOptions struct {
	root             string
	outputLimit      int64
	totalOutputLimit int64 // 0: none
	drainTimeout     time.Duration
	oomScoreAdj      *int
	rlimitAs         int64
	rlimitFsize      int64
}

type processManager struct {
	opts      processOptions
	mu        sync.Mutex
	records   map[string]*process
	starting  map[string]chan struct{}
	byPid     map[int]*process
	sealed    []*process
	forkMu    sync.Mutex // held by a start's fork and by the reaper's waits
	stopReap  chan struct{}
	reapWoken chan os.Signal
}

func newProcessManager(opts processOptions) *processManager {
	m := &processManager{
		opts:      opts,
		records:   map[string]*process{},
		starting:  map[string]chan struct{}{},
		byPid:     map[int]*process{},
		stopReap:  make(chan struct{}),
		reapWoken: make(chan os.Signal, 1),
	}
	signal.Notify(m.reapWoken, syscall.SIGCHLD)
	go m.reap()
	return m
}

// reap collects every ended child, the agent's own processes and the orphans it inherits.
func (m *processManager) reap() {
	for {
		m.forkMu.Lock()
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || pid <= 0 {
				break
			}
			m.mu.Lock()
			p := m.byPid[pid]
			delete(m.byPid, pid)
			m.mu.Unlock()
			if p != nil {
				m.finish(p, status)
			}
		}
		m.forkMu.Unlock()
		select {
		case <-m.reapWoken:
		case <-m.stopReap:
			return
		}
	}
}

func (m *processManager) finish(p *process, status syscall.WaitStatus) {
	exit := &exitInfo{end: time.Now()}
	switch {
	case status.Signaled():
		exit.signal = int32(status.Signal())
		exit.code = 128 + exit.signal
	case status.Exited():
		exit.code = int32(status.ExitStatus())
	default:
		exit.code = 255
	}
	p.exit = exit
	close(p.done)
}

func (m *processManager) close() {
	signal.Stop(m.reapWoken)
	close(m.stopReap)
}

func (m *processManager) hostPath(segments []string) string {
	return filepath.Join(append([]string{m.opts.root}, segments...)...)
}

func executableError(display string, err error) error {
	if err == syscall.ENOENT || err == syscall.ENOTDIR {
		return errorf(codeNotFound, "command: %s does not exist", display)
	}
	return errorf(codePermissionDenied, "command: %s is not executable", display)
}

func checkExecutable(file, display string) error {
	var st syscall.Stat_t
	if err := syscall.Stat(file, &st); err != nil {
		return executableError(display, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return errorf(codePermissionDenied, "command: %s is not executable", display)
	}
	if err := syscall.Access(file, 1); err != nil {
		return executableError(display, err)
	}
	return nil
}

// resolveCommand finds the program as execvp does: a name with a slash as a path, otherwise
// along PATH.
func resolveCommand(command, cwd, envPath string) (string, error) {
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	if strings.Contains(command, "/") {
		file := abs(command)
		return file, checkExecutable(file, command)
	}
	denied := false
	for _, dir := range strings.Split(envPath, ":") {
		if dir == "" {
			dir = "."
		}
		file := abs(filepath.Join(dir, command))
		err := checkExecutable(file, command)
		if err == nil {
			return file, nil
		}
		if re, ok := err.(*rpcError); ok && re.code == codePermissionDenied {
			denied = true
		}
	}
	if denied {
		return "", errorf(codePermissionDenied, "command: %s is not executable", command)
	}
	return "", errorf(codeNotFound, "command: %s was not found in PATH", command)
}

type startRequest struct {
	processID string
	command   string
	args      []string
	cwd       string
	env       map[string]string
}

func (m *processManager) start(req startRequest) (*process, error) {
	if req.processID == "" {
		return nil, errorf(codeInvalidArgument, "process_id: is required")
	}
	// Known as being started before anything is checked: the host asks for the process's end in
	// the same breath as its start, and a wait that arrives while the start is checked then waits
	// for it rather than answering NOT_FOUND (which costs the host a second round trip).
	m.mu.Lock()
	if _, ok := m.records[req.processID]; ok {
		m.mu.Unlock()
		return nil, errorf(codeAlreadyExists, "process %s already exists", req.processID)
	}
	if _, ok := m.starting[req.processID]; ok {
		m.mu.Unlock()
		return nil, errorf(codeAlreadyExists, "process %s already exists", req.processID)
	}
	started := make(chan struct{})
	m.starting[req.processID] = started
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.starting, req.processID)
		m.mu.Unlock()
		close(started)
	}()
	if req.command == "" {
		return nil, errorf(codeInvalidArgument, "command: is required")
	}
	if strings.ContainsRune(req.command, 0) {
		return nil, errorf(codeInvalidArgument, "command: arguments must not contain NUL bytes")
	}
	for _, a := range req.args {
		if strings.ContainsRune(a, 0) {
			return nil, errorf(codeInvalidArgument, "command: arguments must not contain NUL bytes")
		}
	}
	wd := req.cwd
	if wd == "" {
		wd = workspace
	}
	segments, err := pathSegments(wd, "working_directory")
	if err != nil {
		return nil, err
	}
	cwd := m.hostPath(segments)
	var st syscall.Stat_t
	if syscall.Stat(cwd, &st) != nil {
		return nil, errorf(codeNotFound, "working_directory: %s does not exist", joinSegments(segments))
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return nil, errorf(codeFailedPrecondition, "working_directory: %s is not a directory", joinSegments(segments))
	}
	env := make([]string, 0, len(req.env)+1)
	path, hasPath := req.env["PATH"]
	for name, value := range req.env {
		// Checked here so that no error message is ever built out of a (secret) value.
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, errorf(codeInvalidArgument, "environment: invalid variable name %s", strconv.Quote(name))
		}
		if strings.ContainsRune(value, 0) {
			return nil, errorf(codeInvalidArgument, "environment: the value of %s contains a NUL byte", name)
		}
		env = append(env, name+"="+value)
	}
	if !hasPath {
		path = defaultPath
		env = append(env, "PATH="+defaultPath)
	}
	file, err := resolveCommand(req.command, cwd, path)
	if err != nil {
		return nil, err
	}

	p, err := m.spawn(req, file, cwd, env)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.records[req.processID] = p
	m.mu.Unlock()
	return p, nil
}

func (m *processManager) spawn(req startRequest, file, cwd string, env []string) (*process, error) {
	var outPipe, errPipe [2]int
	if err := syscall.Pipe2(outPipe[:], syscall.O_CLOEXEC); err != nil {
		return nil, errorf(codeInternal, "cannot start the process: %v", err)
	}
	if err := syscall.Pipe2(errPipe[:], syscall.O_CLOEXEC); err != nil {
		syscall.Close(outPipe[0])
		syscall.Close(outPipe[1])
		return nil, errorf(codeInternal, "cannot start the process: %v", err)
	}
	devNull, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		for _, fd := range []int{outPipe[0], outPipe[1], errPipe[0], errPipe[1]} {
			syscall.Close(fd)
		}
		return nil, errorf(codeInternal, "cannot start the process: %v", err)
	}
	argv := append([]string{req.command}, req.args...)
	exe := file
	if m.opts.rlimitAs > 0 || m.opts.rlimitFsize > 0 {
		// Limits must hold before the program runs: the agent, as a small helper, sets them and
		// execs the program.
		helper := []string{execHelperName, strconv.FormatInt(m.opts.rlimitAs, 10), strconv.FormatInt(m.opts.rlimitFsize, 10), file}
		argv = append(helper, argv...)
		exe = "/proc/self/exe"
	}
	attr := &syscall.ProcAttr{
		Dir:   cwd,
		Env:   env,
		Files: []uintptr{uintptr(devNull), uintptr(outPipe[1]), uintptr(errPipe[1])},
		Sys:   &syscall.SysProcAttr{Setsid: true},
	}
	p := &process{id: req.processID, log: newOutputLog(m.opts.outputLimit), done: make(chan struct{})}
	m.forkMu.Lock()
	pid, err := syscall.ForkExec(exe, argv, attr)
	if err == nil {
		p.pid = pid
		m.mu.Lock()
		m.byPid[pid] = p
		m.mu.Unlock()
	}
	m.forkMu.Unlock()
	syscall.Close(devNull)
	syscall.Close(outPipe[1])
	syscall.Close(errPipe[1])
	if err != nil {
		syscall.Close(outPipe[0])
		syscall.Close(errPipe[0])
		if errno, ok := err.(syscall.Errno); ok {
			return nil, executableError(req.command, errno)
		}
		return nil, errorf(codeInternal, "cannot start the process")
	}
	if m.opts.oomScoreAdj != nil {
		_ = os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte(strconv.Itoa(*m.opts.oomScoreAdj)), 0)
	}
	// Non-blocking, the pipes are read through the runtime's poller rather than each holding
	// a thread (see threads.go).
	_ = syscall.SetNonblock(outPipe[0], true)
	_ = syscall.SetNonblock(errPipe[0], true)
	m.capture(p, outPipe[0], errPipe[0])
	// The reaper may have missed this child's end while the fork held it off.
	select {
	case m.reapWoken <- syscall.SIGCHLD:
	default:
	}
	return p, nil
}

// capture feeds both pipes into the log. The log is complete once the process has ended and
// both pipes are closed, or a while after it ended when something it started still holds them.
func (m *processManager) capture(p *process, stdout, stderr int) {
	var pipes sync.WaitGroup
	poller, pollerErr := sharedOutputPoller()
	for _, pipe := range []struct{ fd, stream int }{{stdout, streamStdout}, {stderr, streamStderr}} {
		pipes.Add(1)
		if pollerErr == nil && poller.add(pipe.fd, pipe.stream, p.log, pipes.Done) == nil {
			continue
		}
		// Without epoll (never on Linux in practice) each pipe has a reader of its own.
		go func() {
			defer pipes.Done()
			f := os.NewFile(uintptr(pipe.fd), "output")
			defer f.Close()
			for {
				buf := make([]byte, 64<<10)
				n, err := f.Read(buf)
				if n > 0 {
					p.log.append(pipe.stream, buf[:n:n])
				}
				if err != nil {
					return
				}
			}
		}()
	}
	closed := make(chan struct{})
	go func() {
		pipes.Wait()
		close(closed)
	}()
	go func() {
		<-p.done
		select {
		case <-closed:
		case <-time.After(m.opts.drainTimeout):
			// The pipes are still read (and dropped, once sealed), so their holder never blocks.
		}
		m.sealLog(p)
	}()
}

// sealLog marks a finished process's log complete and keeps the total of kept output within
// its budget by releasing the logs of the processes that ended first.
func (m *processManager) sealLog(p *process) {
	p.log.seal()
	if m.opts.totalOutputLimit <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sealed = append(m.sealed, p)
	var total int64
	for _, r := range m.records {
		total += r.log.keptBytes()
	}
	if _, ok := m.records[p.id]; !ok {
		total += p.log.keptBytes()
	}
	for total > m.opts.totalOutputLimit && len(m.sealed) > 0 {
		oldest := m.sealed[0]
		m.sealed = m.sealed[1:]
		total -= oldest.log.keptBytes()
		oldest.log.release()
	}
}

func (m *processManager) get(id string) (*process, error) {
	if id == "" {
		return nil, errorf(codeInvalidArgument, "process_id: is required")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.records[id]
	if !ok {
		return nil, errorf(codeNotFound, "process %s not found", id)
	}
	return p, nil
}

func (m *processManager) signal(id string, sig int32) error {
	if sig < 1 || sig > 64 {
		return errorf(codeInvalidArgument, "signal: must be between 1 and 64")
	}
	p, err := m.get(id)
	if err != nil {
		return err
	}
	if p.exited() != nil {
		return errorf(codeFailedPrecondition, "process %s has already ended", id)
	}
	if err := syscall.Kill(-p.pid, syscall.Signal(sig)); err != nil {
		if err == syscall.ESRCH {
			return errorf(codeFailedPrecondition, "process %s has already ended", id)
		}
		return errorf(codePermissionDenied, "process %s: cannot send signal %d", id, sig)
	}
	return nil
}

// wait returns once the process has ended; a process being started is waited for once started.
func (m *processManager) wait(ctx context.Context, id string) (*process, error) {
	m.mu.Lock()
	starting := m.starting[id]
	m.mu.Unlock()
	if starting != nil {
		select {
		case <-starting:
		case <-ctx.Done():
			return nil, asRPCError(ctx, ctx.Err())
		}
	}
	p, err := m.get(id)
	if err != nil {
		return nil, err
	}
	select {
	case <-p.done:
		return p, nil
	case <-ctx.Done():
		return nil, asRPCError(ctx, ctx.Err())
	}
}

// forward sends a signal to every process group still running.
func (m *processManager) forward(sig syscall.Signal) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.records {
		if p.exited() == nil {
			_ = syscall.Kill(-p.pid, sig)
		}
	}
}

// runExecHelper is the agent run as its own exec helper: it sets the per-process limits, then
// becomes the program. Exit code 127 when the program cannot be run.
func runExecHelper(args []string) {
	if len(args) < 4 {
		os.Exit(127)
	}
	set := func(resource int, text string) {
		if v, err := strconv.ParseUint(text, 10, 64); err == nil && v > 0 {
			_ = syscall.Setrlimit(resource, &syscall.Rlimit{Cur: v, Max: v})
		}
	}
	set(syscall.RLIMIT_AS, args[0])
	set(syscall.RLIMIT_FSIZE, args[1])
	err := syscall.Exec(args[2], args[3:], os.Environ())
	_ = err
	os.Exit(127)
}

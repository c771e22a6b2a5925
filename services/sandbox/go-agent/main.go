// The sandbox agent: one static binary, the first process of the sandbox (the init of its PID
// namespace, docs/adr/0190). The host passes its settings as JSON in AIEM_AGENT_CONFIG (in a pod,
// a file AIEM_AGENT_CONFIG_FILE names); the agent serves the AgentService (gRPC over HTTP/2
// without TLS) on a unix socket (in a pod, TCP) and prints "ready" on standard output once it does. With --drop-capabilities it first empties every capability set of
// its own (bubblewrap leaves the bounding set full), so nothing in the sandbox can gain one.
//
// Shielded from its own sandbox (docs/adr/0102): it makes itself undumpable before it serves
// anything, so nothing in the sandbox can trace it, read its memory or take its descriptors;
// it has no debugger to open. It reaps every orphan of the sandbox (child subreaper); SIGTERM
// and SIGINT end every process group it started, then the agent; other signals that would end
// it by default are taken and dropped.
package main

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// version is set at build time (-ldflags -X main.version=...); the configuration's otherwise.
var version = ""

type config struct {
	SocketFd *int   `json:"socketFd"`
	Socket   string `json:"socket"`
	// Listen is a TCP address (":50051") to serve on instead of a socket: a sandbox in a pod of a
	// cluster, reached over the pod network. It needs Token, which every request must carry.
	Listen                string `json:"listen"`
	Token                 string `json:"token"`
	EnsureDirs            bool   `json:"ensureDirs"`
	Root                  string `json:"root"`
	Version               string `json:"version"`
	OutputLimitBytes      int64  `json:"outputLimitBytes"`
	TotalOutputLimitBytes int64  `json:"totalOutputLimitBytes"`
	KeepAliveMs           int64  `json:"keepAliveMs"`
	DrainTimeoutMs        int64  `json:"drainTimeoutMs"`
	MaxReadBytes          int64  `json:"maxReadBytes"`
	MaxMessageBytes       int64  `json:"maxMessageBytes"`
	OomScoreAdj           *int   `json:"oomScoreAdj"`
	RlimitAsBytes         int64  `json:"rlimitAsBytes"`
	RlimitFsizeBytes      int64  `json:"rlimitFsizeBytes"`
	// UsageFromCgroup: report memory and CPU from the agent's own cgroup v2 (a sandbox in a pod,
	// whose container's cgroup holds the agent and every process it starts).
	UsageFromCgroup bool `json:"usageFromCgroup"`
}

const (
	prSetDumpable       = 4
	prSetChildSubreaper = 36
)

func prctl(option, arg uintptr) error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, option, arg, 0); errno != 0 {
		return errno
	}
	return nil
}

// closeOnExecAbove marks every open descriptor above `low` close-on-exec.
func closeOnExecAbove(low int) {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > low {
			syscall.CloseOnExec(fd)
		}
	}
}

func (c config) options() agentOptions {
	def := func(v, d int64) int64 {
		if v > 0 {
			return v
		}
		return d
	}
	cgroupRoot := ""
	if c.UsageFromCgroup {
		cgroupRoot = "/"
	}
	v := c.Version
	if version != "" {
		v = version
	}
	return agentOptions{
		version:          v,
		root:             c.Root,
		outputLimit:      def(c.OutputLimitBytes, 16<<20),
		totalOutputLimit: c.TotalOutputLimitBytes,
		keepAlive:        time.Duration(def(c.KeepAliveMs, 5000)) * time.Millisecond,
		drainTimeout:     time.Duration(def(c.DrainTimeoutMs, 2000)) * time.Millisecond,
		maxReadBytes:     def(c.MaxReadBytes, 4<<20),
		maxMessageBytes:  int(def(c.MaxMessageBytes, 256<<20)),
		oomScoreAdj:      c.OomScoreAdj,
		rlimitAs:         c.RlimitAsBytes,
		rlimitFsize:      c.RlimitFsizeBytes,
		cgroupRoot:       cgroupRoot,
	}
}

func ensureDir(dir string, mode os.FileMode) error {
	if err := os.Mkdir(dir, mode); err != nil {
		if os.IsExist(err) {
			return nil
		}
		return err
	}
	return os.Chmod(dir, mode)
}

// socketListener listens on the descriptor the host bound for the agent. listen() here stamps
// the socket's peer credentials with the agent, which the service checks on every connection.
func socketListener(fd int) (net.Listener, error) {
	target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return nil, fmt.Errorf("the socket descriptor %d is not open: %v", fd, err)
	}
	if !strings.HasPrefix(target, "socket:") {
		return nil, fmt.Errorf("descriptor %d is not a socket but %s", fd, target)
	}
	flags, _, errno := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
	if errno != 0 {
		return nil, fmt.Errorf("the socket descriptor %d cannot be read: %v", fd, errno)
	}
	// Without close-on-exec every program started here would hold the agent's socket.
	if flags&syscall.FD_CLOEXEC == 0 {
		return nil, fmt.Errorf("the socket descriptor %d is not close-on-exec", fd)
	}
	if err := syscall.Listen(fd, 511); err != nil {
		return nil, fmt.Errorf("cannot listen on descriptor %d: %v", fd, err)
	}
	file := os.NewFile(uintptr(fd), "agent.sock")
	defer file.Close()
	return net.FileListener(file)
}

func newServer(a *agent, token string) *http.Server {
	methods := a.methods()
	maxBytes := a.opts.maxMessageBytes
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Server{
		Protocols: &protocols,
		HTTP2: &http.HTTP2Config{
			MaxReadFrameSize:              1 << 20,
			MaxReceiveBufferPerConnection: 32 << 20,
			MaxReceiveBufferPerStream:     32 << 20,
			MaxConcurrentStreams:          10_000,
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Over TCP anyone on the network could call: only the service knows the token.
			if token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("aiem-agent-token")), []byte(token)) != 1 {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			if strings.HasPrefix(r.URL.Path, filesPrefix) {
				a.serveFiles(w, r)
				return
			}
			serveGRPC(w, r, methods, maxBytes)
		}),
		ErrorLog: nil,
	}
}

// handleSignals takes every signal that would end or stop the agent by default, or make the Go
// runtime end it, and drops it, so that nothing in the sandbox can end its agent but through
// SIGTERM or SIGINT, which end every process group it started, then the agent. As the PID
// namespace's init the agent is also out of reach of SIGKILL and SIGSTOP sent from inside.
func handleSignals(a *agent) {
	var taken []os.Signal
	for sig := syscall.Signal(1); sig < 32; sig++ {
		switch sig {
		case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGCHLD, syscall.SIGURG, syscall.SIGPROF, syscall.SIGWINCH, syscall.SIGCONT:
			// Cannot be taken, are the reaper's or the Go runtime's, or are harmless.
		default:
			taken = append(taken, sig)
		}
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, taken...)
	go func() {
		for sig := range signals {
			switch sig {
			case syscall.SIGTERM, syscall.SIGINT:
				a.processes.forward(syscall.SIGKILL)
				os.Exit(0)
			default:
				// Anything in the sandbox may send these: they are taken and dropped, never
				// passed on to every process.
			}
		}
	}()
}

// readConfig reads the settings from AIEM_AGENT_CONFIG itself (the local runtime hands them over
// so), or else from the file AIEM_AGENT_CONFIG_FILE names (a pod's Secret mounted read-only, which
// keeps the token out of the pod's spec). Both variables are removed: no program the agent starts
// inherits them. Returns what was read and where from, for messages.
func readConfig() ([]byte, string, error) {
	if raw, ok := os.LookupEnv("AIEM_AGENT_CONFIG"); ok {
		os.Unsetenv("AIEM_AGENT_CONFIG")
		os.Unsetenv("AIEM_AGENT_CONFIG_FILE")
		return []byte(raw), "AIEM_AGENT_CONFIG", nil
	}
	file := os.Getenv("AIEM_AGENT_CONFIG_FILE")
	if file == "" {
		return nil, "", fmt.Errorf("neither AIEM_AGENT_CONFIG nor AIEM_AGENT_CONFIG_FILE is set")
	}
	os.Unsetenv("AIEM_AGENT_CONFIG_FILE")
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, "", fmt.Errorf("cannot read the configuration (AIEM_AGENT_CONFIG_FILE): %v", err)
	}
	return raw, file, nil
}

func run(dropCaps bool) error {
	// Before anything else: the agent's threads keep no capability, and neither can any program
	// it starts gain one.
	if dropCaps {
		if err := dropCapabilities(); err != nil {
			return err
		}
	}
	// Nothing in the sandbox may trace the agent or read its /proc files.
	if err := prctl(prSetDumpable, 0); err != nil {
		return fmt.Errorf("cannot make the agent undumpable: %v", err)
	}
	// No descriptor the agent inherited (its socket among them) may reach a program it starts.
	closeOnExecAbove(2)
	// Orphans of the sandbox's processes come to the agent, which reaps them.
	_ = prctl(prSetChildSubreaper, 1)
	reserveThreads()
	raw, source, err := readConfig()
	if err != nil {
		return err
	}
	var c config
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("%s is not valid JSON: %v", source, err)
	}
	if c.Root == "" {
		c.Root = "/"
	}
	// Files and directories the agent and its processes create get 0644 and 0755 by default.
	syscall.Umask(0o022)
	if c.EnsureDirs {
		if err := ensureDir(filepath.Join(c.Root, "workspace"), 0o755); err != nil {
			return err
		}
		if err := ensureDir(filepath.Join(c.Root, "tmp"), 0o1777|os.ModeSticky); err != nil {
			return err
		}
		_ = os.Chmod(filepath.Join(c.Root, "tmp"), 0o777|os.ModeSticky)
	}
	var listener net.Listener
	switch {
	case c.SocketFd != nil:
		listener, err = socketListener(*c.SocketFd)
	case c.Socket != "":
		_ = os.Remove(c.Socket)
		listener, err = net.Listen("unix", c.Socket)
	case c.Listen != "" && c.Token == "":
		err = fmt.Errorf("listening on %s needs a token", c.Listen)
	case c.Listen != "":
		listener, err = net.Listen("tcp", c.Listen)
	default:
		err = fmt.Errorf("the configuration names no socket")
	}
	if err != nil {
		return err
	}
	a := newAgent(c.options())
	handleSignals(a)
	token := ""
	if c.SocketFd == nil && c.Socket == "" {
		token = c.Token
	}
	server := newServer(a, token)
	go func() {
		_ = server.Serve(listener)
	}()
	os.Stdout.WriteString("ready\n")
	select {}
}

func main() {
	if len(os.Args) > 0 && os.Args[0] == execHelperName {
		runExecHelper(os.Args[1:])
		return
	}
	if handled, err := runCommand(os.Args[1:]); handled {
		if err != nil {
			fmt.Fprintf(os.Stderr, "agent: %v\n", err)
			os.Exit(1)
		}
		return
	}
	dropCaps := len(os.Args) > 1 && os.Args[1] == dropCapabilitiesFlag
	if err := run(dropCaps); err != nil {
		fmt.Fprintf(os.Stderr, "agent failed to start: %v\n", err)
		os.Exit(1)
	}
}

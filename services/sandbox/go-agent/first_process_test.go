package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary runs as the agent itself when asked (see startAgentProcess).
func TestMain(m *testing.M) {
	if os.Getenv("AIEM_AGENT_TEST_AS_AGENT") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// startAgentProcess runs the agent as a process of its own (the test binary as the agent), with
// its settings as the host gives them, until it prints "ready".
func startAgentProcess(t *testing.T, binary string, args ...string) (*exec.Cmd, *testAgent) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "agent.sock")
	cmd := exec.Command(binary, args...)
	cmd.Env = []string{
		"AIEM_AGENT_TEST_AS_AGENT=1",
		`AIEM_AGENT_CONFIG={"socket":"` + socket + `","root":"` + t.TempDir() + `","version":"test"}`,
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("the agent did not start: %q %v", line, err)
	}
	return cmd, &testAgent{t: t, client: unixClient(socket)}
}

// capabilityLines reads the capability sets of every thread of `pid`.
func capabilityLines(t *testing.T, pid int) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/" + itoa(pid) + "/task")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, task := range tasks {
		status, err := os.ReadFile("/proc/" + itoa(pid) + "/task/" + task.Name() + "/status")
		if err != nil {
			continue // ended meanwhile
		}
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "Cap") {
				lines = append(lines, task.Name()+" "+line)
			}
		}
	}
	return lines
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestDropCapabilitiesEmptiesEverySetOfEveryThread(t *testing.T) {
	if !hasCapability(t, os.Getpid(), 8) { // CAP_SETPCAP
		t.Skip("needs CAP_SETPCAP, as bubblewrap gives the agent")
	}
	// As the agent is built: without cgo (the race detector's builds have it, and with it Go
	// cannot change every thread's capabilities).
	binary := filepath.Join(t.TempDir(), "agent")
	build := exec.Command(goCommand(), "build", "-o", binary, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd, ta := startAgentProcess(t, binary, dropCapabilitiesFlag)
	ta.ok("Health", nil)
	lines := capabilityLines(t, cmd.Process.Pid)
	if len(lines) < 5*2 {
		t.Fatalf("expected the sets of several threads, got %v", lines)
	}
	for _, line := range lines {
		if !strings.HasSuffix(line, "\t0000000000000000") {
			t.Fatalf("a capability is left: %s (all: %v)", line, lines)
		}
	}
}

func goCommand() string {
	if path, err := exec.LookPath("go"); err == nil {
		return path
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func hasCapability(t *testing.T, pid, capability int) bool {
	t.Helper()
	for _, line := range capabilityLines(t, pid) {
		if fields := strings.Fields(line); len(fields) == 3 && fields[1] == "CapEff:" {
			var eff uint64
			for _, c := range fields[2] {
				eff = eff<<4 | uint64(strings.IndexRune("0123456789abcdef", c))
			}
			return eff&(1<<capability) != 0
		}
	}
	return false
}

func TestSignalsFromTheSandboxLeaveTheAgentServing(t *testing.T) {
	cmd, ta := startAgentProcess(t, os.Args[0])
	ta.ok("Health", nil)
	for _, sig := range []syscall.Signal{
		syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTRAP,
		syscall.SIGABRT, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGILL,
		syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGSYS,
		syscall.SIGPWR, syscall.SIGSTKFLT, syscall.SIGIO, syscall.SIGPIPE, syscall.SIGTSTP,
		syscall.SIGTTIN, syscall.SIGTTOU,
	} {
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		ta.ok("Health", nil)
	}
	// SIGTERM ends it, having ended its processes.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the agent ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not end on SIGTERM")
	}
}

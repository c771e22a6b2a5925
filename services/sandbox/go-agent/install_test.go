package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runAsAgent runs the test binary as the agent (see TestMain) with the given arguments.
func runAsAgent(t *testing.T, binary string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = []string{"AIEM_AGENT_TEST_AS_AGENT=1"}
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	err := cmd.Run()
	return out.String() + errOut.String(), err
}

func TestInstallCopiesTheAgentExecutableAndItRuns(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dest := filepath.Join(dir, "agent")
	// No AIEM_AGENT_CONFIG: installing needs none, as in the init container.
	if out, err := runAsAgent(t, self, "install", dest); err != nil {
		t.Fatalf("install failed: %v: %s", err, out)
	}
	info, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o755 {
		t.Fatalf("the installed agent has mode %v, want 0755", info.Mode().Perm())
	}
	want, _ := os.ReadFile(self)
	got, _ := os.ReadFile(dest)
	if !bytes.Equal(want, got) {
		t.Fatalf("the installed agent differs from the running one (%d bytes, want %d)", len(got), len(want))
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("install left %d files in the directory, want only the agent", len(entries))
	}
	// The copy runs: it answers --version (this test binary has no version stamped in).
	out, err := runAsAgent(t, dest, "--version")
	if err != nil || out != "dev\n" {
		t.Fatalf("the installed agent's --version: %q %v", out, err)
	}
	// Installing again replaces the file in place.
	if out, err := runAsAgent(t, self, "install", dest); err != nil {
		t.Fatalf("a second install failed: %v: %s", err, out)
	}
}

func TestInstallRefusesBadArguments(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"install"},
		{"install", ""},
		{"install", "a", "b"},
		{"install", filepath.Join(t.TempDir(), "missing", "agent")},
		{"--version", "extra"},
	} {
		out, err := runAsAgent(t, self, args...)
		if err == nil || !strings.HasPrefix(out, "agent: ") {
			t.Errorf("%q: want a failure naming the agent, got %q %v", args, out, err)
		}
	}
}

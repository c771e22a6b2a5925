package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
)

// A thousand idle sandboxes must fit the default bound on all sandboxes' threads of a host with
// the kernel's default pid_max (16,384) with room to spare: 1,000 agents and their bubblewrap
// parents at 14 threads a sandbox leave 2,384 for the sandboxes' own processes. Measured in a
// process of its own, as fresh as an agent's.
func TestReservedThreadsFitAThousandSandboxes(t *testing.T) {
	if os.Getenv("AIEM_THREADS_CHILD") == "1" {
		reserveThreads()
		status, err := os.ReadFile("/proc/self/status")
		if err != nil {
			t.Skipf("no /proc: %v", err)
		}
		fmt.Printf("threads=%s\n", regexp.MustCompile(`(?m)^Threads:\s+(\d+)`).FindSubmatch(status)[1])
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReservedThreadsFitAThousandSandboxes$")
	cmd.Env = append(os.Environ(), "AIEM_THREADS_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	m := regexp.MustCompile(`threads=(\d+)`).FindSubmatch(out)
	if m == nil {
		t.Skipf("no thread count: %s", out)
	}
	n, _ := strconv.Atoi(string(m[1]))
	t.Logf("an idle agent's threads after the reservation: %d", n)
	if n > 13 {
		t.Fatalf("an idle agent holds %d threads; at most 13 fit a thousand sandboxes", n)
	}
}

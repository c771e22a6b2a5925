package main

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeCgroupRoot lays out /proc/self/cgroup and the cgroup's files as a container sees them.
func fakeCgroupRoot(t *testing.T, selfCgroup string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	write := func(path, text string) {
		full := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/self/cgroup", selfCgroup)
	for path, text := range files {
		write(path, text)
	}
	return root
}

const cpuStat = "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n"

func TestReadUsageTakesTheContainersCgroup(t *testing.T) {
	// A container with its own cgroup namespace: the agent's cgroup is the root of /sys/fs/cgroup.
	root := fakeCgroupRoot(t, "0::/\n", map[string]string{
		"sys/fs/cgroup/memory.current": "73400320\n",
		"sys/fs/cgroup/cpu.stat":       cpuStat,
	})
	opts := config{Root: t.TempDir(), Version: "test", UsageFromCgroup: true}.options()
	opts.cgroupRoot = root
	out, err := readUsage(opts.root, opts.cgroupRoot)
	if err != nil {
		t.Fatal(err)
	}
	r, err := decodeRequest(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.int64(3) != 73400320 || r.int64(4) != 2_500_000_000 || r.int64(1) <= 0 {
		t.Fatalf("usage from the cgroup: memory %d, cpu %d ns, disk %d", r.int64(3), r.int64(4), r.int64(1))
	}
}

func TestOwnCgroupDirFollowsTheUnifiedLine(t *testing.T) {
	// Without a cgroup namespace the line names the container's cgroup under the host's tree.
	root := fakeCgroupRoot(t, "12:memory:/kubepods/x\n0::/kubepods/pod1/c1\n", map[string]string{
		"sys/fs/cgroup/kubepods/pod1/c1/memory.current": "1\n",
		"sys/fs/cgroup/kubepods/pod1/c1/cpu.stat":       cpuStat,
	})
	dir, ok := ownCgroupDir(root)
	if !ok || dir != filepath.Join(root, "sys/fs/cgroup/kubepods/pod1/c1") {
		t.Fatalf("dir %q %v", dir, ok)
	}
	if memory, cpu, ok := cgroupUsage(dir); !ok || memory != 1 || cpu != 2_500_000_000 {
		t.Fatalf("usage %d %d %v", memory, cpu, ok)
	}
}

func TestReadUsageFallsBackToTheProcessTree(t *testing.T) {
	for name, root := range map[string]string{
		// cgroup v1 only (no unified line with files), as on this kind of host.
		"v1":      fakeCgroupRoot(t, "4:memory:/x\n0::/\n", nil),
		"missing": t.TempDir(),
		"broken": fakeCgroupRoot(t, "0::/\n", map[string]string{
			"sys/fs/cgroup/memory.current": "73400320\n",
			"sys/fs/cgroup/cpu.stat":       "nr_periods 0\n",
		}),
	} {
		out, err := readUsage(t.TempDir(), root)
		if err != nil {
			t.Fatal(err)
		}
		r, _ := decodeRequest(out)
		// The test process's own resident memory, not the fake cgroup's.
		if r.int64(3) <= 0 || r.int64(3) == 73400320 {
			t.Fatalf("%s: memory %d", name, r.int64(3))
		}
	}
}

func TestUsageFromCgroupIsOffUnlessConfigured(t *testing.T) {
	if off := (config{}).options(); off.cgroupRoot != "" {
		t.Fatal("a local sandbox's agent must not read /sys/fs/cgroup, which is not its own")
	}
	if on := (config{UsageFromCgroup: true}).options(); on.cgroupRoot != "/" {
		t.Fatal("usageFromCgroup reads the agent's own filesystem")
	}
}

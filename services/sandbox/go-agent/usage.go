// What the sandbox uses, measured from inside: the filesystem under its root, and the memory and
// CPU time of the agent's process tree read from /proc, or of its container's cgroup (cgroup.go).
package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// userHZ is the unit of /proc times, 100 on every architecture's ABI.
const userHZ = 100

type procStat struct {
	pid, ppid int
	ticks     int64
}

// parseProcStat parses /proc/<pid>/stat; the command may hold spaces and parentheses, so the
// fields count from its end.
func parseProcStat(text string) (procStat, bool) {
	open, close := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
	if open < 0 || close < open || close+2 > len(text) {
		return procStat{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(text[:open]))
	if err != nil {
		return procStat{}, false
	}
	rest := strings.Fields(text[close+2:])
	if len(rest) < 15 {
		return procStat{}, false
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil {
		return procStat{}, false
	}
	var ticks int64
	for _, i := range []int{11, 12, 13, 14} {
		v, err := strconv.ParseInt(rest[i], 10, 64)
		if err != nil {
			return procStat{}, false
		}
		ticks += v
	}
	return procStat{pid: pid, ppid: ppid, ticks: ticks}, true
}

func parseRSSBytes(status string) int64 {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				v, _ := strconv.ParseInt(fields[0], 10, 64)
				return v * 1024
			}
		}
	}
	return 0
}

// processTree is the set of `root` and everything below it.
func processTree(stats []procStat, root int) map[int]bool {
	children := map[int][]int{}
	for _, s := range stats {
		children[s.ppid] = append(children[s.ppid], s.pid)
	}
	found := map[int]bool{}
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if found[pid] {
			continue
		}
		found[pid] = true
		queue = append(queue, children[pid]...)
	}
	return found
}

// readUsage answers ReadUsage: memory and CPU from the cgroup of the agent under `cgroupRoot`
// when it is set and the agent has one there, otherwise from its process tree.
func readUsage(root, cgroupRoot string) ([]byte, error) {
	var disk syscall.Statfs_t
	if err := syscall.Statfs(root, &disk); err != nil {
		return nil, fsError(err, "/")
	}
	var memory, cpuNanos int64
	measured := false
	if cgroupRoot != "" {
		if dir, ok := ownCgroupDir(cgroupRoot); ok {
			memory, cpuNanos, measured = cgroupUsage(dir)
		}
	}
	if !measured {
		memory, cpuNanos = processTreeUsage()
	}
	var e encoder
	e.int(1, int64(disk.Blocks)*disk.Bsize)
	e.int(2, int64(disk.Bavail)*disk.Bsize)
	e.int(3, memory)
	e.int(4, cpuNanos)
	return e.b, nil
}

// processTreeUsage is the resident memory and CPU time of the agent and everything below it.
func processTreeUsage() (memory, cpuNanos int64) {
	entries, _ := os.ReadDir("/proc")
	var stats []procStat
	for _, entry := range entries {
		if _, err := strconv.Atoi(entry.Name()); err != nil {
			continue
		}
		text, err := os.ReadFile("/proc/" + entry.Name() + "/stat")
		if err != nil {
			continue // ended while being read
		}
		if s, ok := parseProcStat(string(text)); ok {
			stats = append(stats, s)
		}
	}
	tree := processTree(stats, os.Getpid())
	var ticks int64
	for _, s := range stats {
		if !tree[s.pid] {
			continue
		}
		ticks += s.ticks
		if status, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/status"); err == nil {
			memory += parseRSSBytes(string(status))
		}
	}
	return memory, ticks * (1_000_000_000 / userHZ)
}

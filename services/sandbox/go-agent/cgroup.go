// What a sandbox in a pod uses, from its container's cgroup (v2): the memory the kernel charges to
// it (page cache included) and its CPU time, as the service reads a local sandbox's cgroup. Only
// where the host asks for it (usageFromCgroup): in a local sandbox /sys/fs/cgroup is not its own.
package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ownCgroupDir is the directory of the agent's cgroup v2 under the filesystem at `root`, from
// /proc/self/cgroup's unified line ("0::/" in a container with its own cgroup namespace); false
// without a unified hierarchy that holds the memory and CPU files.
func ownCgroupDir(root string) (string, bool) {
	text, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(text), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			dir := filepath.Join(root, "sys/fs/cgroup", filepath.Clean("/"+path))
			if _, err := os.Stat(filepath.Join(dir, "memory.current")); err != nil {
				return "", false
			}
			return dir, true
		}
	}
	return "", false
}

// parseUsageUsec reads `usage_usec` from a cpu.stat file.
func parseUsageUsec(text string) (int64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(line, "usage_usec "); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// cgroupUsage is the memory in bytes and the CPU time in nanoseconds of the cgroup at `dir`.
func cgroupUsage(dir string) (memory, cpuNanos int64, ok bool) {
	current, err := os.ReadFile(filepath.Join(dir, "memory.current"))
	if err != nil {
		return 0, 0, false
	}
	memory, err = strconv.ParseInt(strings.TrimSpace(string(current)), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	stat, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, 0, false
	}
	usec, ok := parseUsageUsec(string(stat))
	if !ok {
		return 0, 0, false
	}
	return memory, usec * 1000, true
}

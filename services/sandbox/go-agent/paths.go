// Sandbox path rules shared by the filesystem and process calls.
package main

import (
	"regexp"
	"strings"
)

// workspace is the directory relative paths start from, and processes start in.
const workspace = "/workspace"

// agentDir is the agent's own directory inside the sandbox; no call may touch it.
const agentDir = ".aiem"

// pathSegments splits a sandbox path into its segments. Relative paths start at /workspace; `.`
// and empty segments are dropped; a `..` segment, an empty path or a NUL byte is
// INVALID_ARGUMENT, so no request can climb out of the place it names.
func pathSegments(path, name string) ([]string, error) {
	if path == "" {
		return nil, errorf(codeInvalidArgument, "%s: is required", name)
	}
	if strings.ContainsRune(path, 0) {
		return nil, errorf(codeInvalidArgument, "%s: must not contain NUL bytes", name)
	}
	full := path
	if !strings.HasPrefix(path, "/") {
		full = workspace + "/" + path
	}
	segments := []string{}
	for _, s := range strings.Split(full, "/") {
		if s == "" || s == "." {
			continue
		}
		if s == ".." {
			return nil, errorf(codeInvalidArgument, "%s: must not contain '..' segments", name)
		}
		segments = append(segments, s)
	}
	return segments, nil
}

func joinSegments(segments []string) string { return "/" + strings.Join(segments, "/") }

var libDir = regexp.MustCompile(`^lib(32|64|x32)?$`)

// isReadOnlySystemPath says whether a canonical path lies where no call may change anything:
// the system directories bound read-only from the host, the kernel's filesystems and the
// agent's own directory.
func isReadOnlySystemPath(segments []string) bool {
	if len(segments) == 0 {
		return false
	}
	switch first := segments[0]; first {
	case "usr", "bin", "sbin", "etc", "proc", "dev", "sys", agentDir:
		return true
	default:
		return libDir.MatchString(first)
	}
}

func isAgentPath(segments []string) bool { return len(segments) > 0 && segments[0] == agentDir }

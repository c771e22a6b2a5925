package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The subcommands the agent image's init container runs: the image holds nothing but the agent
// (no shell, no cp), so the agent copies itself into the pod's shared volume (docs/adr/0272).
const (
	installCommand = "install"
	versionFlag    = "--version"
)

// installSelf copies the running binary to dest, executable, through a temporary file in the
// same directory renamed into place, so a reader never sees a partial agent.
func installSelf(dest string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the agent's own binary: %v", err)
	}
	return installFile(self, dest)
}

func installFile(source, dest string) error {
	in, err := os.Open(source)
	if err != nil {
		return err
	}
	defer in.Close()
	temp, err := os.CreateTemp(filepath.Dir(dest), ".agent-*")
	if err != nil {
		return err
	}
	defer os.Remove(temp.Name())
	if _, err := io.Copy(temp, in); err != nil {
		temp.Close()
		return err
	}
	if err := temp.Chmod(0o755); err != nil {
		temp.Close()
		return err
	}
	if err := temp.Close(); err != nil {
		return err
	}
	return os.Rename(temp.Name(), dest)
}

// runCommand runs a subcommand named by the arguments; false when they name none.
func runCommand(args []string) (bool, error) {
	if len(args) == 0 {
		return false, nil
	}
	switch args[0] {
	case versionFlag:
		if len(args) != 1 {
			return true, fmt.Errorf("usage: agent --version")
		}
		if version == "" {
			fmt.Println("dev")
		} else {
			fmt.Println(version)
		}
		return true, nil
	case installCommand:
		if len(args) != 2 || args[1] == "" {
			return true, fmt.Errorf("usage: agent install <destination file>")
		}
		return true, installSelf(args[1])
	}
	return false, nil
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadConfigFromTheVariableOrTheFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "agent.json")
	if err := os.WriteFile(file, []byte(`{"listen":":50051","token":"t"}`), 0o400); err != nil {
		t.Fatal(err)
	}

	// The variable wins, and neither is left for the programs the agent starts.
	t.Setenv("AIEM_AGENT_CONFIG", `{"socket":"s"}`)
	t.Setenv("AIEM_AGENT_CONFIG_FILE", file)
	raw, source, err := readConfig()
	if err != nil || string(raw) != `{"socket":"s"}` || source != "AIEM_AGENT_CONFIG" {
		t.Fatalf("from the variable: %q %q %v", raw, source, err)
	}
	for _, name := range []string{"AIEM_AGENT_CONFIG", "AIEM_AGENT_CONFIG_FILE"} {
		if _, ok := os.LookupEnv(name); ok {
			t.Fatalf("%s is still set", name)
		}
	}

	// In a pod: the file the variable names.
	t.Setenv("AIEM_AGENT_CONFIG_FILE", file)
	raw, source, err = readConfig()
	if err != nil || string(raw) != `{"listen":":50051","token":"t"}` || source != file {
		t.Fatalf("from the file: %q %q %v", raw, source, err)
	}
	if _, ok := os.LookupEnv("AIEM_AGENT_CONFIG_FILE"); ok {
		t.Fatal("AIEM_AGENT_CONFIG_FILE is still set")
	}

	t.Setenv("AIEM_AGENT_CONFIG_FILE", filepath.Join(t.TempDir(), "missing.json"))
	if _, _, err = readConfig(); err == nil || !strings.Contains(err.Error(), "AIEM_AGENT_CONFIG_FILE") {
		t.Fatalf("a missing file: %v", err)
	}
	os.Unsetenv("AIEM_AGENT_CONFIG_FILE")
	if _, _, err = readConfig(); err == nil || !strings.Contains(err.Error(), "neither") {
		t.Fatalf("nothing set: %v", err)
	}
}

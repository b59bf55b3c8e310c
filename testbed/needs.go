package testbed

import (
	"os"
	"os/exec"
)

// NeedTool returns the path of command name for a test that cannot run
// without it. When it is missing the test fails under CI=true, where every
// tool must be installed (.ci/deps), and is skipped elsewhere with the
// reason. Every package's tests use this one rule.
func NeedTool(t TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required when CI=true: %v", name, err)
		}
		t.Skipf("%s not installed (%v); CI=true makes this a failure", name, err)
	}
	return p
}

// NeedRoot is NeedTool's rule for tests that must run as root.
func NeedRoot(t TB) {
	t.Helper()
	if euid := os.Geteuid(); euid != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("root is required when CI=true (running as uid %d)", euid)
		}
		t.Skipf("needs root (running as uid %d); CI=true makes this a failure", euid)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

func TestCreateClusterManifests(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "install")
	copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", "static"), dir)
	runBinary(t, "create", "cluster-manifests", "--dir", dir)
	for _, f := range []string{"cluster-deployment.yaml", "agent-cluster-install.yaml", "cluster-image-set.yaml", "infraenv.yaml", "pull-secret.yaml", "nmstateconfig.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, "cluster-manifests", f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	cis, _ := os.ReadFile(filepath.Join(dir, "cluster-manifests", "cluster-image-set.yaml"))
	if !strings.Contains(string(cis), defaultRelease) {
		t.Errorf("cluster-image-set.yaml does not name %s:\n%s", defaultRelease, cis)
	}
}

// TestCreateReportsEveryProblem: bad inputs stop the command with one
// file:line:col line per problem.
func TestCreateReportsEveryProblem(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "install")
	copyDir(t, filepath.Join("..", "..", "configimage", "inputs", "testdata", "compact"), dir)
	ac := filepath.Join(dir, "agent-config.yaml")
	b, err := os.ReadFile(ac)
	if err != nil {
		t.Fatal(err)
	}
	bad := regexp.MustCompile(`rendezvousIP: \S+`).ReplaceAll(b, []byte("rendezvousIP: 300.1.1.1"))
	bad = regexp.MustCompile(`macAddress: \S+`).ReplaceAll(bad, []byte("macAddress: zz:zz"))
	if err := os.WriteFile(ac, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nodezeroBinary(t), "create", "cluster-manifests", "--dir", dir)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("create succeeded on bad inputs:\n%s", out)
	}
	lines := regexp.MustCompile(`(?m)^agent-config\.yaml:\d+:\d+: \S+: .+$`).FindAllString(string(out), -1)
	if len(lines) < 2 {
		t.Errorf("want a file:line:col line for the rendezvous IP and each MAC, got:\n%s", out)
	}
	if !strings.Contains(string(out), "rendezvousIP") || !strings.Contains(string(out), "macAddress") {
		t.Errorf("output does not name the fields:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "cluster-manifests")); !os.IsNotExist(err) {
		t.Errorf("manifests written despite the errors: %v", err)
	}
}

package boot

import (
	"context"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/daemon/issue"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/issue")

// consoleFiles is what the console shows under root: every issue.d and
// motd.d file with its content, the test's temporary directory replaced.
func consoleFiles(t *testing.T, root, tmp string) string {
	t.Helper()
	var names []string
	for _, dir := range []string{issue.IssueDir, issue.MotdDir} {
		ents, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range ents {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(root, n))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("== " + n + " ==\n")
		b.WriteString(strings.ReplaceAll(string(data), tmp, "<tmp>"))
	}
	if b.Len() == 0 {
		return "(nothing on the console)\n"
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "issue", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s (-want +got):\n%s", path, d)
	}
}

// TestConsoleGoldens walks one host through every stage and failure the
// console reports and compares /etc/issue.d and /etc/motd.d with golden
// texts after each.
func TestConsoleGoldens(t *testing.T) {
	tmp := t.TempDir()
	root := filepath.Join(tmp, "host")
	if err := os.MkdirAll(filepath.Join(root, "etc/assisted/manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc/assisted/manifests/cluster-image-set.yaml"), []byte("spec:\n  releaseImage: quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	board := issue.NewBoard(root)
	wrong := filepath.Join(tmp, "other-release.iso")
	writeImage(t, wrong, "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64")
	broken := filepath.Join(tmp, "broken.iso")
	if err := os.WriteFile(broken, []byte("not an ISO"), 0o644); err != nil {
		t.Fatal(err)
	}
	right := filepath.Join(tmp, "agentconfig.noarch.iso")
	writeImage(t, right, "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64")

	// wait runs the config stage with images offered once; it stops after
	// one look unless the image configures the host.
	wait := func(images ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		calls := 0
		err := ConfigWait{Root: root, Board: board, Interval: time.Millisecond, Images: func() ([]string, error) {
			calls++
			if calls > 1 {
				cancel()
			}
			return images, nil
		}}.Run(ctx)
		if err != nil && err != context.Canceled {
			t.Fatal(err)
		}
	}
	wait()
	golden(t, "01-waiting-for-config-image", consoleFiles(t, root, tmp))
	wait(wrong)
	golden(t, "02-config-image-other-release", consoleFiles(t, root, tmp))
	wait(broken)
	golden(t, "03-config-image-unreadable", consoleFiles(t, root, tmp))
	wait(right)
	golden(t, "04-configured", consoleFiles(t, root, tmp))

	// The node-zero stage, for the rendezvous host and for another.
	for _, tc := range []struct {
		name  string
		links fixedLinks
	}{
		{"05-rendezvous-host", fixedLinks{{Name: "ens3", MAC: "52:54:00:aa:bb:01", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.20/24")}}}},
		{"06-not-the-rendezvous-host", fixedLinks{{Name: "ens3", MAC: "52:54:00:aa:bb:02", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.21/24")}}}},
		// A host with both configured MACs matches two host dirs: the
		// static network fails, the host goes on and says why.
		{"06b-static-network-failed", fixedLinks{
			{Name: "ens3", MAC: "52:54:00:aa:bb:01", Addrs: []netip.Prefix{netip.MustParsePrefix("192.168.111.20/24")}},
			{Name: "ens4", MAC: "52:54:00:aa:bb:02"},
		}},
	} {
		host := configuredRoot(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		stop := func(ctx context.Context, _ Env) error { cancel(); return ctx.Err() }
		s := &Sequence{Root: host, Links: tc.links, Board: issue.NewBoard(host),
			NodeZeroWindow: time.Millisecond, NodeZeroInterval: time.Millisecond, Service: stop, Agent: stop}
		if err := s.Run(ctx); err != context.Canceled {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cancel()
		golden(t, tc.name, consoleFiles(t, host, tmp))
	}

	// Node zero's install status.
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		status   string
		failures []string
	}{
		{"07-waiting-for-hosts", "Waiting for 2 of 5 hosts to be known: worker-1 insufficient (has-min-memory), 1 host not registered yet", nil},
		// Peers that have not booted yet are the normal state, not a
		// failure: nothing in red, the 90 line counts them.
		{"07b-peers-not-booted", "Waiting for 4 of 5 hosts to be known: master-0 discovering, 3 hosts not registered yet",
			[]string{"master-0: Host not registered", "master-1: Host not registered", "master-2: Host not registered", "worker-0: Host not registered"}},
		{"08-host-config-failures", "Waiting for 1 of 5 hosts to be known: master-2 pending-for-input", []string{"master-2: no disk matches the root device hints (deviceName: /dev/sdz)", ""}},
		// A real failure shows without the hosts still to come.
		{"08b-host-config-failures-and-peers", "Waiting for 2 of 5 hosts to be known: master-2 pending-for-input, 1 host not registered yet",
			[]string{"master-2: no disk matches the root device hints (deviceName: /dev/sdz)", "worker-1: Host not registered"}},
		// The last registration pass ran before master-0 registered; the
		// install started right after: no "not registered" under it.
		{"08c-installing-after-last-pass", "Cluster installation started with 3 control plane and 2 worker hosts",
			[]string{"master-0: Host not registered"}},
		{"08d-host-config-failures-again", "Waiting for 1 of 5 hosts to be known: master-2 pending-for-input", []string{"master-2: no disk matches the root device hints (deviceName: /dev/sdz)"}},
		{"08e-installing-with-stale-failures", "Cluster installation in progress", []string{"master-2: no disk matches the root device hints (deviceName: /dev/sdz)"}},
		{"09-installing", "Cluster installation started with 3 control plane and 2 worker hosts", nil},
		{"10-cannot-proceed", "Installation cannot proceed: Cluster status: error", nil},
	} {
		if err := ShowInstallStatus(ctx, board, tc.status, tc.failures); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.name, consoleFiles(t, root, tmp))
	}
}

package installfiles

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/testbed"
)

var needTool = testbed.NeedTool

// pointer is a spec 3.2.0 pointer config, as openshift-install writes
// master.ign and worker.ign.
func pointer(role string) string {
	return `{"ignition":{"config":{"merge":[{"source":"https://api-int.edge.example.com:22623/config/` + role +
		`"}]},"security":{"tls":{"certificateAuthorities":[{"source":"data:text/plain;charset=utf-8;base64,Zm9v"}]}},"version":"3.2.0"}}`
}

// standIn is what the recording stand-in writes for each output, by path
// under its --dir.
type standIn map[string]string

func goodOutputs() standIn {
	return standIn{
		"bootstrap.ign":           `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"/opt/openshift/bootkube.sh","contents":{"source":"data:,x"},"mode":493}]}}`,
		"master.ign":              pointer("master"),
		"worker.ign":              pointer("worker"),
		"metadata.json":           `{"clusterName":"edge","clusterID":"5a1b7c4e-0000-4000-8000-000000000000","infraID":"edge-x7k2p"}`,
		"auth/kubeconfig":         "apiVersion: v1\nkind: Config\n",
		"auth/kubeadmin-password": "Abcde-Fghij-Kmnop-Qrstu",
	}
}

// fromTLS as a stand-in's output makes it write that file from its tls/
// directory, as openshift-install does under
// OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS=true: auth/kubeadmin-password is
// tls/kubeadmin-password (empty without it); auth/kubeconfig and
// bootstrap.ign are written by this test binary run as a helper
// (standInFromTLS), which signs a client certificate with the loaded
// admin-kubeconfig-signer as openshift-install would.
const fromTLS = "\x00from tls/"

// loadingOutputs are goodOutputs with the credentials written from tls/.
func loadingOutputs() standIn {
	out := goodOutputs()
	for _, p := range []string{"bootstrap.ign", "auth/kubeconfig", "auth/kubeadmin-password"} {
		out[p] = fromTLS
	}
	return out
}

// standInHelperEnv runs this test binary as the stand-in's helper, on the
// installer's directory; standInWriteEnv lists the outputs it writes.
const (
	standInHelperEnv = "NODEZERO_INSTALLFILES_STANDIN_DIR"
	standInWriteEnv  = "NODEZERO_INSTALLFILES_STANDIN_WRITE"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(standInHelperEnv); dir != "" {
		if err := standInFromTLS(dir, strings.Fields(os.Getenv(standInWriteEnv))); err != nil {
			fmt.Fprintln(os.Stderr, "stand-in helper:", err)
			os.Exit(7)
		}
		os.Exit(0)
	}
	os.Exit(runTests(m))
}

// runTests runs the tests with the config image's credentials set up
// (setUpConfigImage) and removed afterwards.
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "installfiles-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := setUpConfigImage(dir); err != nil {
		fmt.Fprintln(os.Stderr, "config image credentials:", err)
		return 1
	}
	return m.Run()
}

// writeStandIn writes a recording openshift-install: it appends its argv,
// working directory, invoker and OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS to
// <rec>/calls, keeps what it was given, and writes outputs on create
// ignition-configs. When its directory has a tls/ before create
// manifests, it insists on the flag and on mode 0600 for every file there,
// and lists them in <rec>/tls-seen. failAt names the subcommand
// ("version", "manifests", "ignition-configs") that instead prints 30
// lines and a fatal message and exits 3.
func writeStandIn(t *testing.T, outputs standIn, failAt string) (exe, rec string) {
	t.Helper()
	needTool(t, "sh")
	dir := t.TempDir()
	rec = filepath.Join(dir, "rec")
	if err := os.Mkdir(rec, 0o755); err != nil {
		t.Fatal(err)
	}
	var writes strings.Builder
	var helper []string
	for _, p := range slices.Sorted(maps.Keys(outputs)) {
		fmt.Fprintf(&writes, "mkdir -p \"$dir/%s\"\n", filepath.Dir(p))
		switch {
		case outputs[p] != fromTLS:
			fmt.Fprintf(&writes, "cat > \"$dir/%s\" <<'STANDIN_EOF'\n%s\nSTANDIN_EOF\n", p, outputs[p])
		case p == "auth/kubeadmin-password":
			fmt.Fprintf(&writes, "if [ -f \"$dir/tls/kubeadmin-password\" ]; then cat \"$dir/tls/kubeadmin-password\"; fi > \"$dir/%s\"\n", p)
		default:
			helper = append(helper, p)
		}
	}
	if helper != nil {
		fmt.Fprintf(&writes, "%s=\"$dir\" %s='%s' '%s' || exit 7\n", standInHelperEnv, standInWriteEnv, strings.Join(helper, " "), os.Args[0])
	}
	script := `#!/bin/sh
export LC_ALL=C
rec='` + rec + `'
printf 'argv:%s|cwd:%s|invoker:%s|load:%s\n' "$*" "$(pwd)" "$OPENSHIFT_INSTALL_INVOKER" "$OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS" >> "$rec/calls"
fail() {
	i=1
	while [ $i -le 30 ]; do echo "level=info msg=line $i"; i=$((i+1)); done
	echo "level=fatal msg=failed to fetch Master Machines: $1" >&2
	exit 3
}
case "$1" in
version)
	[ "` + failAt + `" = version ] && fail version
	echo "openshift-install 4.17.0-standin"
	echo "built from commit 0123abc"
	echo "release image quay.io/openshift-release-dev/ocp-release@sha256:00"
	;;
create)
	[ "$3" = --dir ] || { echo "want --dir, got $3" >&2; exit 9; }
	dir=$4
	case "$2" in
	manifests)
		[ "` + failAt + `" = manifests ] && fail manifests
		cp "$dir/install-config.yaml" "$rec/install-config.yaml" || exit 4
		ls -A "$dir" > "$rec/before-manifests"
		if [ -d "$dir/tls" ]; then
			[ "$OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS" = true ] || { echo "tls/ given without OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS=true" >&2; exit 5; }
			for f in "$dir"/tls/*; do
				[ "$(stat -c %a "$f")" = 600 ] || { echo "$f is not mode 0600" >&2; exit 5; }
			done
			ls "$dir/tls" > "$rec/tls-seen"
		fi
		rm "$dir/install-config.yaml"
		mkdir -p "$dir/manifests" "$dir/openshift"
		echo "kind: Infrastructure" > "$dir/manifests/cluster-infrastructure-02-config.yml"
		;;
	ignition-configs)
		[ "` + failAt + `" = ignition-configs ] && fail ignition-configs
		(cd "$dir" && find manifests openshift -type f | sort) > "$rec/manifests-seen"
		` + writes.String() + `
		;;
	*) echo "unknown target $2" >&2; exit 2 ;;
	esac
	;;
*) echo "unknown command $1" >&2; exit 2 ;;
esac
`
	exe = filepath.Join(dir, "openshift-install")
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, rec
}

func readRec(t *testing.T, rec, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(rec, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// installerInput runs exe without an override directory (the stand-in's
// canned credentials are nobody's); the tests of the directory set one.
func installerInput(t *testing.T, exe string) Input {
	in := testInput(3, 2)
	in.TLSDir = ""
	in.Installer = exe
	in.WorkDir = filepath.Join(t.TempDir(), "work") // made by Generate
	in.Manifests = []Manifest{
		{Folder: "manifests", FileName: "50-user.yaml", Content: []byte("kind: MachineConfig\n")},
		{Folder: "openshift", FileName: "99-user.yaml", Content: []byte("kind: ConfigMap\n")},
	}
	return in
}

func TestInstallerArgumentContract(t *testing.T) {
	exe, rec := writeStandIn(t, goodOutputs(), "")
	in := installerInput(t, exe)
	files, err := Generate(context.Background(), in)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}

	calls := strings.Split(strings.TrimSpace(readRec(t, rec, "calls")), "\n")
	if len(calls) != 3 {
		t.Fatalf("calls = %q, want version, create manifests, create ignition-configs", calls)
	}
	_, cwd, _ := strings.Cut(calls[0], "|cwd:")
	cwd, _, _ = strings.Cut(cwd, "|")
	if filepath.Dir(cwd) != in.WorkDir {
		t.Errorf("installer ran in %q, want a directory inside WorkDir %q", cwd, in.WorkDir)
	}
	want := []string{
		"argv:version|cwd:" + cwd + "|invoker:agent-installer|load:",
		"argv:create manifests --dir " + cwd + "|cwd:" + cwd + "|invoker:agent-installer|load:",
		"argv:create ignition-configs --dir " + cwd + "|cwd:" + cwd + "|invoker:agent-installer|load:",
	}
	if d := cmp.Diff(want, calls); d != "" {
		t.Errorf("calls (-want +got):\n%s", d)
	}
	if _, err := os.Stat(cwd); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("scratch directory %s left behind: %v", cwd, err)
	}

	ic, err := InstallConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := readRec(t, rec, "install-config.yaml"); got != string(ic) {
		t.Errorf("installer got install-config:\n%s\nwant:\n%s", got, ic)
	}
	if got := readRec(t, rec, "before-manifests"); got != "install-config.yaml\n" {
		t.Errorf("before create manifests the directory held %q, want only install-config.yaml", got)
	}
	wantSeen := "manifests/50-user.yaml\nmanifests/cluster-infrastructure-02-config.yml\nopenshift/99-user.yaml\n"
	if got := readRec(t, rec, "manifests-seen"); got != wantSeen {
		t.Errorf("create ignition-configs saw manifests %q, want %q", got, wantSeen)
	}

	if files.Generator != "openshift-install 4.17.0-standin" {
		t.Errorf("Generator = %q", files.Generator)
	}
	out := goodOutputs()
	wantCluster := map[string]string{
		FileInstallConfig:     string(ic),
		FileBootstrap:         out["bootstrap.ign"],
		FileMaster:            out["master.ign"],
		FileWorker:            out["worker.ign"],
		FileMetadata:          out["metadata.json"],
		FileKubeconfig:        out["auth/kubeconfig"],
		FileKubeadminPassword: out["auth/kubeadmin-password"],
	}
	gotCluster := map[string]string{}
	for k, v := range files.Cluster {
		gotCluster[k] = strings.TrimSuffix(string(v), "\n") // the heredoc's newline
	}
	wantCluster[FileInstallConfig] = strings.TrimSuffix(wantCluster[FileInstallConfig], "\n")
	if d := cmp.Diff(wantCluster, gotCluster); d != "" {
		t.Errorf("cluster files (-want +got):\n%s", d)
	}

	for _, h := range in.Hosts {
		b := files.Hosts[h.ID]
		if v := ignVersion(t, b); v != "3.2.0" {
			t.Errorf("host %s version = %q, want the installer's 3.2.0", h.ID, v)
		}
		cfg := parseIgn(t, h.ID, b)
		wantSrc := "https://api-int.edge.example.com:22623/config/" + string(h.Role)
		if len(cfg.Ignition.Config.Merge) != 1 || *cfg.Ignition.Config.Merge[0].Source != wantSrc {
			t.Errorf("host %s merges %v, want %s", h.ID, cfg.Ignition.Config.Merge, wantSrc)
		}
		fs := filesOf(t, cfg)
		if fs["/etc/hostname"].content != h.RequestedHostname+"\n" || fs["/etc/nodezero/host-id"].content != h.ID+"\n" {
			t.Errorf("host %s files = %v", h.ID, fs)
		}
	}
}

func TestInstallerFailure(t *testing.T) {
	for _, at := range []string{"version", "manifests", "ignition-configs"} {
		t.Run(at, func(t *testing.T) {
			exe, _ := writeStandIn(t, goodOutputs(), at)
			in := installerInput(t, exe)
			_, err := Generate(context.Background(), in)
			var ie *InstallerError
			if !errors.As(err, &ie) {
				t.Fatalf("Generate = %v, want an *InstallerError", err)
			}
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 3 {
				t.Errorf("error %v does not carry exit status 3", err)
			}
			if ie.Args[len(ie.Args)-1] != at && !slices.Contains(ie.Args, at) {
				t.Errorf("Args = %q, want the failing %s", ie.Args, at)
			}
			lines := strings.Split(ie.Output, "\n")
			if len(lines) != installerTailLines {
				t.Errorf("output has %d lines, want the last %d:\n%s", len(lines), installerTailLines, ie.Output)
			}
			if want := "level=fatal msg=failed to fetch Master Machines: " + at; lines[len(lines)-1] != want {
				t.Errorf("last output line = %q, want %q", lines[len(lines)-1], want)
			}
			if strings.Contains(ie.Output, "line 5\n") {
				t.Errorf("output kept early lines:\n%s", ie.Output)
			}
			if !strings.Contains(err.Error(), "failed to fetch Master Machines") {
				t.Errorf("Error() = %q, want the installer's fatal message in it", err)
			}
			entries, rerr := os.ReadDir(in.WorkDir)
			if rerr != nil || len(entries) != 0 {
				t.Errorf("WorkDir after failure holds %v (%v), want it empty", entries, rerr)
			}
		})
	}
}

func TestInstallerBadOutputs(t *testing.T) {
	t.Run("invalid ignition", func(t *testing.T) {
		out := goodOutputs()
		out["master.ign"] = `{"ignition":{"version":"3.2.0"},"storage":{"files":[{"path":"etc/motd"}]}}`
		exe, _ := writeStandIn(t, out, "")
		_, err := Generate(context.Background(), installerInput(t, exe))
		var ce *CheckError
		if !errors.As(err, &ce) || ce.File != FileMaster || ce.Problems[0].Path != "$.storage.files.0.path" {
			t.Fatalf("Generate = %v, want a CheckError on master.ign's $.storage.files.0.path", err)
		}
	})
	t.Run("missing worker.ign", func(t *testing.T) {
		out := goodOutputs()
		delete(out, "worker.ign")
		exe, _ := writeStandIn(t, out, "")
		_, err := Generate(context.Background(), installerInput(t, exe))
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "worker.ign") {
			t.Fatalf("Generate = %v, want a missing worker.ign", err)
		}
	})
	t.Run("installer not there", func(t *testing.T) {
		in := installerInput(t, filepath.Join(t.TempDir(), "openshift-install"))
		_, err := Generate(context.Background(), in)
		var ie *InstallerError
		if !errors.As(err, &ie) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Generate = %v, want an InstallerError for a missing executable", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		exe, _ := writeStandIn(t, goodOutputs(), "")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Generate(ctx, installerInput(t, exe))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Generate = %v, want context.Canceled", err)
		}
	})
}

func TestInstallerVersion(t *testing.T) {
	for out, want := range map[string]string{
		"openshift-install 4.16.3\nbuilt from commit x\n": "openshift-install 4.16.3",
		"openshift-baremetal-install 4.15.0\n":            "openshift-install 4.15.0",
		"":                                                "openshift-install (unknown version)",
	} {
		if got := installerVersion([]byte(out)); got != want {
			t.Errorf("installerVersion(%q) = %q, want %q", out, got, want)
		}
	}
}

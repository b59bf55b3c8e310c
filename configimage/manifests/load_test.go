package manifests

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/report"
)

// writeSet writes the compact set into a fresh asset directory and returns
// it.
func writeSet(t testing.TB) string {
	t.Helper()
	set, err := Generate(compactSpec())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(dir, set); err != nil {
		t.Fatal(err)
	}
	return dir
}

// edit replaces old with new in one file of dir's cluster-manifests.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, ClusterManifestsDir, file)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// brief is an entry without the temp directory, for comparison.
type brief struct {
	File       string
	Line, Col  int
	Path, Text string
}

func briefs(ps []report.Entry) []brief {
	var out []brief
	for _, p := range ps {
		out = append(out, brief{filepath.Base(p.File), p.Line, p.Column, p.Path, p.Message})
	}
	return out
}

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []brief
	}{{
		name: "type error names line and field",
		change: func(t *testing.T, dir string) {
			edit(t, dir, AgentClusterInstallFile, "controlPlaneAgents: 3", "controlPlaneAgents: three")
		},
		want: []brief{{AgentClusterInstallFile, 30, 0, "spec.provisionRequirements.controlPlaneAgents",
			"cannot unmarshal !!str `three` into int"}},
	}, {
		name: "syntax error",
		change: func(t *testing.T, dir string) {
			edit(t, dir, ClusterImageSetFile, "spec:\n", "spec:\n  - x\n   y: [\n")
		},
		want: []brief{{ClusterImageSetFile, 8, 0, "", "mapping values are not allowed in this context"}},
	}, {
		name: "wrong kind and missing fields, all reported",
		change: func(t *testing.T, dir string) {
			edit(t, dir, ClusterDeploymentFile, "kind: ClusterDeployment", "kind: Cluster")
			edit(t, dir, ClusterDeploymentFile, "  baseDomain: test.metalkube.org\n", "")
			edit(t, dir, ClusterImageSetFile, "releaseImage: quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64", "releaseImage: \"\"")
		},
		want: []brief{
			{ClusterDeploymentFile, 2, 7, "kind", `got "Cluster", want "ClusterDeployment"`},
			{ClusterDeploymentFile, 6, 1, "spec.baseDomain", "required"},
			{ClusterImageSetFile, 7, 17, "spec.releaseImage", "required"},
		},
	}, {
		name: "pull secret key missing",
		change: func(t *testing.T, dir string) {
			edit(t, dir, PullSecretFile, ".dockerconfigjson:", "config.json:")
		},
		want: []brief{{PullSecretFile, 6, 1, "stringData", "the pull secret key '.dockerconfigjson' is not defined"}},
	}, {
		name: "unsupported platform and architecture",
		change: func(t *testing.T, dir string) {
			edit(t, dir, AgentClusterInstallFile, "platformType: BareMetal", "platformType: OpenStack")
			edit(t, dir, InfraEnvFile, "cpuArchitecture: x86_64", "cpuArchitecture: riscv64")
		},
		want: []brief{
			{AgentClusterInstallFile, 28, 17, "spec.platformType", `Unsupported value: "OpenStack": supported values: "BareMetal", "External", "None", "Nutanix", "VSphere"`},
			{InfraEnvFile, 13, 20, "spec.cpuArchitecture", `"riscv64" is not supported: use x86_64, aarch64, ppc64le or s390x`},
		},
	}, {
		name: "nmstate document without labels",
		change: func(t *testing.T, dir string) {
			edit(t, dir, NMStateConfigFile, "  labels:\n    infraenvs.agent-install.openshift.io: ostest\n  name: ostest-0", "  name: ostest-0")
		},
		want: []brief{{NMStateConfigFile, 3, 1, "metadata.labels", "ostest-0 does not have any label set"}},
	}, {
		name: "missing file",
		change: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, ClusterManifestsDir, InfraEnvFile)); err != nil {
				t.Fatal(err)
			}
		},
		want: []brief{{InfraEnvFile, 0, 0, "", "missing: the file is required"}},
	}, {
		name: "extra manifest that is not YAML",
		change: func(t *testing.T, dir string) {
			if err := os.WriteFile(filepath.Join(dir, ExtraManifestsDir, "bad.yml"), []byte("a: [b\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		want: []brief{{"bad.yml", 1, 0, "", "did not find expected ',' or ']'"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSet(t)
			tt.change(t, dir)
			set, err := Load(dir)
			if !errors.Is(err, report.ErrInvalid) {
				t.Fatalf("Load: got set %v, err %v; want ErrInvalid", set != nil, err)
			}
			var le *report.Invalid
			if !errors.As(err, &le) {
				t.Fatalf("Load error %T is not *report.Invalid", err)
			}
			if diff := cmp.Diff(tt.want, briefs(le.Entries)); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nerror text:\n%v", diff, err)
			}
		})
	}
}

func TestLoadWarnsUnknownFields(t *testing.T) {
	dir := writeSet(t)
	edit(t, dir, AgentClusterInstallFile, "  platformType: BareMetal\n", "  platformType: BareMetal\n  futureField: 1\n")
	edit(t, dir, ClusterDeploymentFile, "status: {}", "status:\n  anything: [1, 2]")
	set, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []brief{{AgentClusterInstallFile, 29, 3, "spec.futureField", "unknown field, ignored"}}
	if diff := cmp.Diff(want, briefs(set.Warnings)); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestLoadInstallerFiles reads what the installer wrote (with lower-case
// platform name and no userManagedNetworking, as older manifests have)
// and applies the installer's defaults.
func TestLoadInstallerFiles(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, ClusterManifestsDir)
	if err := os.MkdirAll(md, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{AgentClusterInstallFile, ClusterDeploymentFile, ClusterImageSetFile, InfraEnvFile, PullSecretFile} {
		b, err := os.ReadFile(filepath.Join("testdata", "installer-sno", f))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "platformType: None", "platformType: none", 1)
		s = strings.Replace(s, "    userManagedNetworking: true\n", "", 1)
		s = strings.Replace(s, "    networkType: OVNKubernetes\n", "", 1)
		if err := os.WriteFile(filepath.Join(md, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	n := set.AgentClusterInstall.Spec.Networking
	if set.AgentClusterInstall.Spec.PlatformType != PlatformNone || n.UserManagedNetworking == nil || !*n.UserManagedNetworking || n.NetworkType != "OVNKubernetes" {
		t.Errorf("defaults: got platform %q umn %v network %q; want None, true, OVNKubernetes",
			set.AgentClusterInstall.Spec.PlatformType, n.UserManagedNetworking, n.NetworkType)
	}
	if got := set.PullSecret.PullSecret(); !strings.Contains(got, `"auth": "c3VwZXItc2VjcmV0Cg=="`) {
		t.Errorf("pull secret: got %q", got)
	}
	if len(set.NMStateConfigs) != 0 || len(set.ExtraManifests) != 0 || len(set.Warnings) != 0 {
		t.Errorf("got %d nmstate configs, %d extra manifests, warnings %v; want none", len(set.NMStateConfigs), len(set.ExtraManifests), set.Warnings)
	}
}

// FuzzLoad feeds arbitrary bytes to each manifest file in turn. Load must
// not panic, and what it accepts must survive Write and Load unchanged.
// It loads from memory (fstest.MapFS) to keep each run short.
func FuzzLoad(f *testing.F) {
	set, err := Generate(compactSpec())
	if err != nil {
		f.Fatal(err)
	}
	base := filesFS(f, set)
	for i, name := range []string{AgentClusterInstallFile, NMStateConfigFile, PullSecretFile} {
		f.Add(uint8(i), base[ClusterManifestsDir+"/"+name].Data)
	}
	f.Add(uint8(1), []byte("apiVersion: agent-install.openshift.io/v1beta1\nkind: NMStateConfig\nmetadata: {labels: {a: b}}\nspec:\n  config: &a {x: [*a]}\n"))
	f.Add(uint8(1), []byte("apiVersion: agent-install.openshift.io/v1beta1\nkind: NMStateConfig\nmetadata: {labels: {a: b}}\nspec:\n  config:\n    a: &a [x, x, x, x, x, x, x, x]\n    b: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n    c: &c [*b, *b, *b, *b, *b, *b, *b, *b]\n    d: &d [*c, *c, *c, *c, *c, *c, *c, *c]\n    e: [*d, *d, *d, *d, *d, *d, *d, *d]\n"))
	f.Add(uint8(6), []byte("a: [b\n"))
	files := []string{AgentClusterInstallFile, NMStateConfigFile, PullSecretFile, ClusterDeploymentFile, ClusterImageSetFile, InfraEnvFile, "../" + ExtraManifestsDir + "/x.yaml"}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		fsys := fstest.MapFS{}
		maps.Copy(fsys, base)
		fsys[path.Clean(ClusterManifestsDir+"/"+files[int(which)%len(files)])] = &fstest.MapFile{Data: data}
		set, err := loadMap(fsys)
		if err != nil {
			if !errors.Is(err, report.ErrInvalid) {
				t.Fatalf("Load: error %v does not wrap ErrInvalid", err)
			}
			return
		}
		set.Warnings = nil
		again, err := loadMap(filesFS(t, set))
		if err != nil {
			t.Fatalf("Load of a written set: %v", err)
		}
		again.Warnings = nil
		if diff := cmp.Diff(set, again); diff != "" {
			t.Fatalf("Load(Write(Load(x))) differs (-first +second):\n%s", diff)
		}
	})
}

// filesFS is set's files in memory, laid out as Write lays them out.
func filesFS(t testing.TB, set *Set) fstest.MapFS {
	t.Helper()
	files, err := set.Files()
	if err != nil {
		t.Fatalf("Files of a loaded set: %v", err)
	}
	fsys := fstest.MapFS{}
	for _, f := range files {
		fsys[f.Name] = &fstest.MapFile{Data: f.Data}
	}
	return fsys
}

func loadMap(fsys fstest.MapFS) (*Set, error) {
	m, _ := fs.Sub(fsys, ClusterManifestsDir)
	x, _ := fs.Sub(fsys, ExtraManifestsDir)
	return loadFS(m, ClusterManifestsDir, x, ExtraManifestsDir)
}

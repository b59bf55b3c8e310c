package nmstate

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/configimage/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenCases returns the names of testdata/*.yaml, the documents whose
// keyfiles are kept in testdata/<name>.golden.
func goldenCases(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden inputs in testdata: %v", err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".yaml"))
	}
	return names
}

// render parses testdata/<name>.yaml and renders it; the document must be valid.
func render(t *testing.T, name string) ([]Keyfile, report.Report) {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, probs := Parse(doc)
	if s == nil {
		t.Fatalf("Parse(%s) failed:\n%v", name, probs)
	}
	kfs, err := s.Keyfiles()
	if err != nil {
		t.Fatalf("Keyfiles(%s) = %v", name, err)
	}
	return kfs, probs
}

// goldenText is what a golden file holds: the warnings, then each keyfile.
func goldenText(kfs []Keyfile, probs report.Report) []byte {
	var b bytes.Buffer
	for _, p := range probs.Entries {
		b.WriteString("# " + p.String() + "\n")
	}
	for _, k := range kfs {
		b.WriteString("### " + k.Name + "\n")
		b.Write(k.Data)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			kfs, probs := render(t, name)
			got := goldenText(kfs, probs)
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("keyfiles of %s differ from %s (-want +got):\n%s", name, path, diff)
			}
		})
	}
}

// TestRenderingIsDeterministic guards against map iteration order leaking
// into the output.
func TestRenderingIsDeterministic(t *testing.T) {
	for _, name := range goldenCases(t) {
		first, _ := render(t, name)
		for range 20 {
			again, _ := render(t, name)
			if diff := cmp.Diff(first, again); diff != "" {
				t.Fatalf("%s renders differently on a second run (-first +again):\n%s", name, diff)
			}
		}
	}
}

func TestUUIDs(t *testing.T) {
	// The reference's values; the first matches a keyfile captured from an
	// agent-installed OKD node.
	tests := []struct{ name, want string }{
		{"ethernet://enp0s31f6", "31e3d3e1-2926-5a24-a073-631ab0e305b7"},
		{"ethernet://eth0", "dfd202f5-562f-5f07-8f2a-a7717756fb70"},
		{"ethernet://eth1", "0523c0a1-5f5e-5603-bcf2-68155d5d322e"},
		{"bond://bond0", "925b4a95-2de0-5b2d-bcf5-8b684a7e9cb4"},
		{"vlan://eth0.100", "fe885346-7e38-5cc2-9b35-2043508caa28"},
		{"linux-bridge://br0", "21dd2f8f-7814-535b-8225-a001da95c87e"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := uuid5(tc.name); got != tc.want {
				t.Errorf("uuid5(%q) = %s, want %s", tc.name, got, tc.want)
			}
		})
	}
}

func TestEmptyDocuments(t *testing.T) {
	for _, doc := range []string{"", "---\n", "interfaces: []\n", "interfaces:\n- name: eth0\n  state: absent\n"} {
		s, probs := Parse([]byte(doc))
		if s == nil {
			t.Errorf("Parse(%q) = nil, %v; want a state", doc, probs)
			continue
		}
		if kfs, err := s.Keyfiles(); !errors.Is(err, ErrNoKeyfiles) {
			t.Errorf("Keyfiles(%q) = %d files, %v; want ErrNoKeyfiles", doc, len(kfs), err)
		}
	}
}

package nmstate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzSeeds are the committed seeds of FuzzParse: a few golden documents,
// one as JSON, and two broken ones.
func fuzzSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{
		"json":         []byte(`{"interfaces":[{"name":"bond0","type":"bond","link-aggregation":{"mode":"802.3ad","port":["eth0","eth1"]},"ipv4":{"enabled":true,"dhcp":true}}],"routes":{"config":[{"destination":"10.0.0.0/8","next-hop-interface":"bond0"}]}}`),
		"broken-yaml":  []byte("interfaces: [\n- name: eth0\n"),
		"invalid-vlan": []byte("interfaces:\n- name: eth0.4095\n  type: vlan\n  vlan: {base-iface: eth0, id: 4095}\n"),
	}
	for _, name := range []string{"a-static-ipv4", "b-bond-active-backup", "dual-stack-static", "bridge-over-bond", "extras"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		seeds[name] = data
	}
	return seeds
}

// TestFuzzSeeds checks the committed corpus matches fuzzSeeds; -update
// rewrites it.
func TestFuzzSeeds(t *testing.T) {
	for name, data := range fuzzSeeds(t) {
		p := filepath.Join("testdata", "fuzz", "FuzzParse", name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%v (run go test -run TestFuzzSeeds -update)", err)
		}
		if string(got) != want {
			t.Errorf("%s is stale (go test -run TestFuzzSeeds -update)", p)
		}
	}
}

// FuzzParse: any bytes parse without a panic; a document that parses
// either fails to render or renders keyfiles that are non-empty, well-formed
// ini (also after the installer's pass) with safe file names.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s, probs := Parse(data)
		if s == nil {
			if len(probs.Errors()) == 0 {
				t.Fatalf("Parse returned no state and no error")
			}
			return
		}
		kfs, err := s.Keyfiles()
		if err != nil {
			return
		}
		for _, k := range kfs {
			if !strings.HasSuffix(k.Name, ".nmconnection") || strings.Contains(k.Name, "/") || strings.HasPrefix(k.Name, ".") {
				t.Fatalf("unsafe file name %q", k.Name)
			}
			for _, form := range []Keyfile{k, InstallerFormat(k)} {
				if err := checkINI(form.Data); err != nil {
					t.Fatalf("%s is not a keyfile: %v\n%s", k.Name, err, form.Data)
				}
			}
		}
	})
}

// checkINI accepts non-empty text made of [section] headers, key=value lines
// (each within a section, no key twice in one section) and blank lines.
func checkINI(data []byte) error {
	if len(data) == 0 {
		return fmt.Errorf("empty")
	}
	var keys map[string]bool
	for n, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") && len(line) > 2:
			keys = map[string]bool{}
		case keys == nil:
			return fmt.Errorf("line %d %q: outside any section", n+1, line)
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || k == "" || strings.ContainsAny(k, " []") || v == "" {
				return fmt.Errorf("line %d %q: not key=value", n+1, line)
			}
			if keys[k] {
				return fmt.Errorf("line %d: key %q repeated", n+1, k)
			}
			keys[k] = true
		}
	}
	return nil
}

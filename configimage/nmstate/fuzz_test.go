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

// FuzzMatchHost runs the on-host half of static networking on a host
// directory with any mac_interface.ini, keyfile names (one a line) and
// keyfile text, on a machine with a short and a long NIC name. A match
// renames every connection file to a distinct, plain file name that fits
// the kernel's limit where a VLAN name is shortened; no match returns
// nothing.
func FuzzMatchHost(f *testing.F) {
	f.Add("52:54:00:aa:bb:01=eth0\n52:54:00:AA:BB:02=eth1\n", "eth0.nmconnection\neth1.nmconnection\neth1.200.nmconnection\nbond0.nmconnection",
		"[connection]\nid=eth0\ninterface-name=eth0\nmaster=bond0\n[vlan]\nparent=eth1\n")
	f.Add("52:54:00:aa:bb:02=eth0\r\n", "eth0.1000.nmconnection\neth0.100.nmconnection", "[vlan]\nparent=eth0\ninterface-name=eth0.1000\n")
	f.Add("52:54:00:aa:bb:99=eth0\n", "eth0.nmconnection", "")
	f.Add("52:54:00:aa:bb:01=eth0\n52:54:00:aa:bb:02=eth0\n", "eth0.nmconnection\neth0.nmconnection", "x=eth0.")
	local := map[string]string{"52:54:00:aa:bb:01": "ens3", "52:54:00:aa:bb:02": "ens1f0np0123"}
	f.Fuzz(func(t *testing.T, ini, names, text string) {
		files := []Keyfile{{Name: "mac_interface.ini", Data: []byte(ini)}}
		conns := 0
		for _, n := range strings.Split(names, "\n") {
			if n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") || n == "mac_interface.ini" {
				continue // not a name a directory entry can have here
			}
			files = append(files, Keyfile{Name: n, Data: []byte(text)})
			if strings.HasSuffix(n, ".nmconnection") {
				conns++
			}
		}
		matched, out, err := MatchHost(files, local)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "match host directory: ") {
				t.Fatalf("MatchHost error %q does not say what failed", err)
			}
			return
		}
		if !matched {
			if out != nil {
				t.Fatalf("MatchHost: no match, yet %d files out", len(out))
			}
			return
		}
		if len(out) != conns {
			t.Fatalf("MatchHost: %d connection files in, %d out", conns, len(out))
		}
		seen := map[string]bool{}
		for _, k := range out {
			if seen[k.Name] || !strings.HasSuffix(k.Name, ".nmconnection") || strings.ContainsAny(k.Name, "/\x00") {
				t.Fatalf("MatchHost wrote file name %q (names %q)", k.Name, names)
			}
			seen[k.Name] = true
		}
	})
}

package nmstate

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// needNmcli returns nmcli's path. It fails under CI=true, where every tool
// must be installed, and skips elsewhere with the reason.
func needNmcli(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("nmcli")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("nmcli is required when CI=true: %v", err)
		}
		t.Skipf("nmcli not installed (%v); CI=true makes this a failure", err)
	}
	return p
}

// nmcliLoad has NetworkManager read a keyfile (`nmcli --offline connection
// modify` takes it on stdin and prints the profile it understood) and
// returns what it printed.
func nmcliLoad(t *testing.T, nmcli string, data []byte, id string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, nmcli, "--offline", "connection", "modify", "connection.id", id)
	cmd.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return out.String() + stderr.String(), err
	}
	return out.String(), nil
}

type iniText map[string]map[string]string

func parseIniText(s string) iniText {
	f := iniText{}
	var cur map[string]string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			cur = map[string]string{}
			f[strings.Trim(line, "[]")] = cur
		case cur != nil:
			k, v, _ := strings.Cut(line, "=")
			cur[k] = v
		}
	}
	return f
}

// semantics is what we require NetworkManager to read back from our files.
type semantics struct {
	Type, Iface, Master, SlaveType string
	Method                         [2]string
	Addresses, Routes, DNS, Search [2][]string
	VLANID, VLANParent, VLANFlags  string
	Bond                           map[string]string
	STP                            string
	MAC, MTU                       string
}

var indexed = regexp.MustCompile(`^(address|route)(\d+)$`)

func semanticsOf(f iniText) semantics {
	c := f["connection"]
	s := semantics{Type: c["type"], Iface: c["interface-name"], Master: c["master"], SlaveType: c["slave-type"]}
	if s.Type == "802-3-ethernet" {
		s.Type = "ethernet"
	}
	if s.Master == "" { // newer NetworkManager spells it controller/port-type
		s.Master, s.SlaveType = c["controller"], c["port-type"]
	}
	list := func(v string) []string {
		v = strings.TrimSuffix(v, ";") // NetworkManager appends ';'
		if v == "" {
			return nil
		}
		return strings.Split(v, ";")
	}
	for k, name := range []string{"ipv4", "ipv6"} {
		sec := f[name]
		if sec == nil {
			continue
		}
		s.Method[k] = sec["method"]
		s.DNS[k], s.Search[k] = list(sec["dns"]), list(sec["dns-search"])
		type entry struct {
			n int
			v string
		}
		var addrs, routes []entry
		for key, v := range sec {
			m := indexed.FindStringSubmatch(key)
			if m == nil {
				continue
			}
			n, _ := strconv.Atoi(m[2])
			if m[1] == "address" {
				addrs = append(addrs, entry{n, v})
			} else {
				routes = append(routes, entry{n, normRoute(v, sec[key+"_options"], k == 1)})
			}
		}
		for _, l := range []*[]entry{&addrs, &routes} {
			sort.Slice(*l, func(a, b int) bool { return (*l)[a].n < (*l)[b].n })
		}
		for _, e := range addrs {
			s.Addresses[k] = append(s.Addresses[k], e.v)
		}
		for _, e := range routes {
			s.Routes[k] = append(s.Routes[k], e.v)
		}
	}
	if v := f["vlan"]; v != nil {
		s.VLANID, s.VLANParent, s.VLANFlags = v["id"], v["parent"], v["flags"]
	}
	if b := f["bond"]; len(b) > 0 {
		s.Bond = b
	}
	if b := f["bridge"]; b != nil {
		s.STP = b["stp"]
		if s.STP == "" {
			s.STP = "true" // NetworkManager's default, which it does not write
		}
	}
	if e := f["ethernet"]; e != nil {
		s.MAC, s.MTU = e["cloned-mac-address"]+e["mac-address"], e["mtu"]
	}
	return s
}

// normRoute spells a route the way NetworkManager writes it back: an empty
// next hop as the unspecified address, options sorted.
func normRoute(line, opts string, v6 bool) string {
	f := strings.Split(line, ",")
	if len(f) > 1 && f[1] == "" {
		f[1] = "0.0.0.0"
		if v6 {
			f[1] = "::"
		}
	}
	o := strings.Split(opts, ",")
	sort.Strings(o)
	return strings.Join(f, ",") + " " + strings.Join(o, ",")
}

// TestNmcliJudge feeds every golden keyfile, raw and after the installer's
// ini pass, to NetworkManager and checks that it reads what we meant.
func TestNmcliJudge(t *testing.T) {
	nmcli := needNmcli(t)
	for _, name := range goldenCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			kfs, _ := render(t, name)
			for _, k := range kfs {
				id := parseIniText(string(k.Data))["connection"]["id"]
				want := semanticsOf(parseIniText(string(k.Data)))
				for _, form := range []Keyfile{k, InstallerFormat(k)} {
					out, err := nmcliLoad(t, nmcli, form.Data, id)
					if err != nil {
						t.Errorf("nmcli rejects %s: %v\n%s\n--- keyfile:\n%s", k.Name, err, out, form.Data)
						continue
					}
					got := semanticsOf(parseIniText(out))
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("nmcli reads %s differently (-ours +nmcli):\n%s", k.Name, diff)
					}
				}
			}
		})
	}
}

// TestNmcliRefusesWhatWeReject shows why Parse is stricter than nmstate:
// NetworkManager itself refuses a name over 15 characters and VLAN id 4095.
func TestNmcliRefusesWhatWeReject(t *testing.T) {
	nmcli := needNmcli(t)
	kfs, _ := render(t, "c-vlan-over-ethernet")
	vlan := string(kfs[1].Data)
	tests := []struct {
		name, keyfile, doc string
	}{
		{"name over 15", strings.ReplaceAll(vlan, "eth0.100", "ens1f0np0123.1000"),
			"interfaces:\n- name: ens1f0np0123.1000\n  type: vlan\n  vlan: {base-iface: ens1f0np0123, id: 1000}\n"},
		{"vlan id 4095", strings.Replace(vlan, "id=100\n", "id=4095\n", 1),
			"interfaces:\n- name: eth0.4095\n  type: vlan\n  vlan: {base-iface: eth0, id: 4095}\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if out, err := nmcliLoad(t, nmcli, []byte(tc.keyfile), "x"); err == nil {
				t.Errorf("nmcli accepted\n%s\nand printed\n%s", tc.keyfile, out)
			}
			if s, _ := Parse([]byte(tc.doc)); s != nil {
				t.Errorf("Parse(%q) accepted what NetworkManager refuses", tc.doc)
			}
		})
	}
}

// lookNmcli finds nmcli for tests that use it only as an extra check.
func lookNmcli() (string, error) { return exec.LookPath("nmcli") }

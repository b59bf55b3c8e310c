package netcheck

import (
	"errors"
	"testing"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// noProbes allows no interface, so a step that gets valid args still sends
// nothing: the fuzz targets run in the machine's own namespace.
func noProbes() (Options, *Stats) {
	st := &Stats{}
	return Options{Interfaces: []string{}, Stats: st, Count: 1, Wait: 1}, st
}

func TestStepArgs(t *testing.T) {
	o, st := noProbes()
	steps := map[string]step.Func{
		"connectivity": ConnectivityStep(o), "free": FreeAddressesStep(o), "vips": VerifyVIPsStep(o),
	}
	for _, tc := range []struct {
		step string
		args []string
		want int
	}{
		{"connectivity", nil, step.ExitNotRun},
		{"connectivity", []string{"[]", "[]"}, step.ExitNotRun},
		{"connectivity", []string{`{"host_id":1}`}, step.ExitNotRun},
		{"connectivity", []string{`[{"host_id":"h","nics":[{"ip_addresses":["10.0.0.300/24"]}]}]`}, step.ExitNotRun},
		{"connectivity", []string{`[{"host_id":"h","nics":[{"mac":"zz"}]}]`}, step.ExitNotRun},
		{"connectivity", []string{`[null]`}, step.ExitNotRun},
		{"connectivity", []string{`[]`}, 0},
		{"free", []string{`["10.0.0.1/24"]`}, step.ExitNotRun}, // not canonical
		{"free", []string{`["fd00::/120"]`}, step.ExitNotRun},
		{"free", []string{`["10.0.0.0/33"]`}, step.ExitNotRun},
		{"free", []string{`["10.0.0.0/20"]`}, 1},  // refused: wider than /22
		{"free", []string{`["10.99.0.0/24"]`}, 1}, // refused: no allowed interface
		{"free", []string{`[]`}, 0},
		{"vips", []string{`[{"vip":"nope","vip_type":"api"}]`}, step.ExitNotRun},
		{"vips", []string{`[null]`}, step.ExitNotRun},
		{"vips", []string{`[{"vip":"10.99.0.5","vip_type":"api"}]`}, 0},
	} {
		out, stderr, code := steps[tc.step](t.Context(), tc.args)
		if code != tc.want {
			t.Errorf("%s step %q = %q, %q, %d, want exit %d", tc.step, tc.args, out, stderr, code, tc.want)
		}
		if code != 0 && stderr == "" {
			t.Errorf("%s step %q: exit %d without a reason", tc.step, tc.args, code)
		}
	}
	if n := st.Sent("", ""); n != 0 {
		t.Errorf("%d probes sent with no interface allowed", n)
	}
}

func TestParseNetworksRefusesWide(t *testing.T) {
	o, _ := noProbes()
	_, err := FreeAddresses(t.Context(), wire.FreeAddressesRequest{"10.0.0.0/21"}, o)
	if !errors.Is(err, ErrRefused) {
		t.Errorf("FreeAddresses(/21) = %v, want ErrRefused", err)
	}
}

func fuzzStep(f *testing.F, mk func(Options) step.Func, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		o, st := noProbes()
		out, stderr, code := mk(o)(t.Context(), []string{arg})
		switch {
		case code == 0 && out == "":
			t.Errorf("arg %q: exit 0 without output", arg)
		case code != 0 && (stderr == "" || out != ""):
			t.Errorf("arg %q: exit %d with output %q, stderr %q", arg, code, out, stderr)
		case code != 0 && code != step.ExitNotRun && code != exitFailed:
			t.Errorf("arg %q: exit %d", arg, code)
		}
		if n := st.Sent("", ""); n != 0 {
			t.Errorf("arg %q: %d probes sent with no interface allowed", arg, n)
		}
	})
}

func FuzzConnectivityArgs(f *testing.F) {
	fuzzStep(f, ConnectivityStep, `[]`, `[{"host_id":"h","nics":[{"name":"e","mac":"02:00:00:00:00:01","ip_addresses":["10.0.0.2/24"]}]}]`, `{`, `null`,
		`[{"host_id":"h","nics":[{"name":"e","mac":"02:00:00:00:00:01","ip_addresses":["10.0.0.2","fd00::2"]}]}]`)
}

func FuzzFreeAddressesArgs(f *testing.F) {
	fuzzStep(f, FreeAddressesStep, `["10.0.0.0/24"]`, `["10.0.0.0/20"]`, `[1]`, `"x"`)
}

func FuzzVerifyVIPsArgs(f *testing.F) {
	fuzzStep(f, VerifyVIPsStep, `[{"vip":"10.0.0.5","vip_type":"api"}]`, `[{"vip":"fd00::5"}]`, `[]`)
}

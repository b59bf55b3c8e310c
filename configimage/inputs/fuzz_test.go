package inputs

import (
	"path/filepath"
	"strings"
	"testing"
)

// The fuzz targets check that no input makes loading or validation panic,
// and that whatever is reported carries a file name. Run them with
//
//	go test ./configimage/inputs -fuzz FuzzLoadAgentConfig -fuzztime 30s

func FuzzLoadInstallConfig(f *testing.F) {
	f.Add([]byte(baseIC))
	for _, dir := range testdataSets(f) {
		f.Add(readFile(f, filepath.Join(dir, InstallConfigFile)))
	}
	acs := [][]byte{[]byte(baseAC)}
	f.Fuzz(func(t *testing.T, data []byte) {
		ic, rep := LoadInstallConfig("install-config.yaml", data)
		if ic == nil {
			if !rep.HasErrors() {
				t.Fatalf("nil config with a report without errors:\n%s", rep.Error())
			}
			return
		}
		ac, _ := LoadAgentConfig("agent-config.yaml", acs[0])
		rep.Merge(Validate(ic, ac))
		checkEntries(t, rep)
	})
}

func FuzzLoadAgentConfig(f *testing.F) {
	f.Add([]byte(baseAC))
	for _, dir := range testdataSets(f) {
		f.Add(readFile(f, filepath.Join(dir, AgentConfigFile)))
	}
	f.Add([]byte("hosts:\n- networkConfig: &a {x: [*a]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ac, rep := LoadAgentConfig("agent-config.yaml", data)
		if ac == nil {
			if !rep.HasErrors() {
				t.Fatalf("nil config with a report without errors:\n%s", rep.Error())
			}
			return
		}
		ic, _ := LoadInstallConfig("install-config.yaml", []byte(baseIC))
		rep.Merge(Validate(ic, ac))
		for _, h := range ac.Hosts {
			if _, err := h.NetworkConfigYAML(); err != nil {
				t.Fatalf("NetworkConfigYAML: %v", err)
			}
		}
		checkEntries(t, rep)
	})
}

func checkEntries(t *testing.T, rep Report) {
	t.Helper()
	for _, e := range rep.Entries {
		if e.File == "" || e.Message == "" || (e.Severity != SeverityError && e.Severity != SeverityWarning) {
			t.Fatalf("malformed entry %+v", e)
		}
		if strings.Contains(e.Message, "ZmFrZTpmYWtl") {
			t.Fatalf("entry leaks the pull secret: %s", e)
		}
	}
	_ = rep.Error()
}

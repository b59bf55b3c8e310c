package inputs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/configimage/report"
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
				t.Fatalf("nil config with a report without errors:\n%s", rep.String())
			}
			checkEntries(t, rep, "install-config.yaml", data)
			return
		}
		ac, _ := LoadAgentConfig("agent-config.yaml", acs[0])
		rep.Merge(Validate(ic, ac))
		checkEntries(t, rep, "install-config.yaml", data)
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
				t.Fatalf("nil config with a report without errors:\n%s", rep.String())
			}
			checkEntries(t, rep, "agent-config.yaml", data)
			return
		}
		ic, _ := LoadInstallConfig("install-config.yaml", []byte(baseIC))
		rep.Merge(Validate(ic, ac))
		for _, h := range ac.Hosts {
			if _, err := h.NetworkConfigYAML(); err != nil {
				t.Fatalf("NetworkConfigYAML: %v", err)
			}
		}
		checkEntries(t, rep, "agent-config.yaml", data)
	})
}

// checkEntries checks every entry names a file and says something, and
// that an entry about the fuzzed file points at one of its lines.
func checkEntries(t *testing.T, rep report.Report, name string, data []byte) {
	t.Helper()
	lines := yamlLines(string(data))
	for _, e := range rep.Entries {
		if e.File == "" || e.Message == "" || (e.Severity != report.Error && e.Severity != report.Warning) {
			t.Fatalf("malformed entry %+v", e)
		}
		if e.File == name && (e.Line < 0 || e.Line > lines || e.Column < 0) {
			t.Fatalf("entry %s points past the file's %d lines", e, lines)
		}
		if strings.Contains(e.Message, fuzzSecret) && onlyInPullSecret(string(data)) {
			t.Fatalf("entry leaks the pull secret: %s", e)
		}
	}
	_ = rep.String()
}

// fuzzSecret is the auth of the seeds' pull secret.
const fuzzSecret = "ZmFrZTpmYWtl"

// onlyInPullSecret reports whether the input has fuzzSecret only on
// pullSecret lines: then a message quoting it leaks the pull secret. The
// same text as another field's value is that field's, and a message may
// quote it.
func onlyInPullSecret(data string) bool {
	found := false
	for _, line := range strings.FieldsFunc(data, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.Contains(line, fuzzSecret) {
			if !strings.Contains(line, "pullSecret") {
				return false
			}
			found = true
		}
	}
	return found
}

// yamlLines counts the lines of a YAML text as the parser does: a line
// ends at \r\n, \r, \n, NEL, LS or PS.
func yamlLines(s string) int {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	n := 1
	for _, r := range s {
		switch r {
		case '\r', '\n', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}

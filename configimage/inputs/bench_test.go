package inputs

import (
	"path/filepath"
	"testing"
)

// BenchmarkLoadAndValidate measures both loads and Validate on the 3+2
// static-network set.
func BenchmarkLoadAndValidate(b *testing.B) {
	icData := readFile(b, filepath.Join("testdata", "static", InstallConfigFile))
	acData := readFile(b, filepath.Join("testdata", "static", AgentConfigFile))
	b.ReportAllocs()
	for b.Loop() {
		ic, rep := LoadInstallConfig("", icData)
		ac, r2 := LoadAgentConfig("", acData)
		rep.Merge(r2)
		rep.Merge(Validate(ic, ac))
		if len(rep.Entries) != 0 {
			b.Fatal(rep.String())
		}
	}
}

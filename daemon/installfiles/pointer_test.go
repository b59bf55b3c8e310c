package installfiles

import (
	"testing"

	"github.com/coreos/ignition/v2/config/v3_2"
	"github.com/google/go-cmp/cmp"
)

// TestPointerIgnition: a day-2 host's pointer Ignition, read back by
// Ignition's own 3.2 parser: the merge source, the CA as a data URL when
// there is one, /etc/hostname when a name is given.
func TestPointerIgnition(t *testing.T) {
	const src = "https://api-int.ostest.example.com:22623/config/worker"
	type read struct {
		Version, Merge, CA, HostnameSource string
		Files                              int
	}
	for _, tc := range []struct {
		name         string
		source, ca   string
		hostname     string
		want         read
		wantErr      bool
		wantMergeLen int
	}{
		{"with CA and name", src, "Q0E=", "worker-5", read{"3.2.0", src, "data:text/plain;base64,Q0E=", "data:,worker-5", 1}, false, 1},
		{"plain http", "http://api.ostest.example.com:22624/config/worker", "", "", read{"3.2.0", "http://api.ostest.example.com:22624/config/worker", "", "", 0}, false, 1},
		{"name escaped", src, "", "a b", read{"3.2.0", src, "", "data:,a%20b", 1}, false, 1},
		{"no source", "", "", "", read{}, true, 0},
		{"source not a URL", "::not a url", "", "", read{}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := PointerIgnition(tc.source, tc.ca, tc.hostname)
			if (err != nil) != tc.wantErr {
				t.Fatalf("PointerIgnition error = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			cfg, rpt, err := v3_2.Parse(b)
			if err != nil {
				t.Fatalf("ignition v3_2.Parse: %v (%v)\n%s", err, rpt, b)
			}
			if len(cfg.Ignition.Config.Merge) != tc.wantMergeLen {
				t.Fatalf("merge has %d sources, want %d", len(cfg.Ignition.Config.Merge), tc.wantMergeLen)
			}
			got := read{Version: cfg.Ignition.Version, Merge: *cfg.Ignition.Config.Merge[0].Source, Files: len(cfg.Storage.Files)}
			if cas := cfg.Ignition.Security.TLS.CertificateAuthorities; len(cas) == 1 {
				got.CA = *cas[0].Source
			}
			for _, f := range cfg.Storage.Files {
				if f.Path == "/etc/hostname" && f.Contents.Source != nil {
					got.HostnameSource = *f.Contents.Source
					if f.Mode == nil || *f.Mode != 0o644 || f.Overwrite == nil || !*f.Overwrite {
						t.Errorf("/etc/hostname mode %v overwrite %v, want 0644 and true", f.Mode, f.Overwrite)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pointer ignition mismatch (-want +got):\n%s\n%s", diff, b)
			}
		})
	}
}

package installfiles

import (
	"errors"
	"strings"
	"testing"

	ignerrors "github.com/coreos/ignition/v2/config/shared/errors"
	"github.com/coreos/ignition/v2/config/v3_5"
	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/report"
)

func TestCheckAccepts(t *testing.T) {
	for name, cfg := range map[string]string{
		"3.4.0":             `{"ignition":{"version":"3.4.0"}}`,
		"3.0.0":             `{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}}]}}`,
		"3.5.0":             `{"ignition":{"version":"3.5.0"}}`,
		"unknown key warns": `{"ignition":{"version":"3.4.0"},"storage":{"filez":[]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := Check("x.ign", []byte(cfg)); err != nil {
				t.Errorf("Check(%s) = %v, want nil", cfg, err)
			}
		})
	}
}

func TestCheckRejects(t *testing.T) {
	tests := []struct {
		name   string
		cfg    string
		want   []report.Entry
		is     error
		prefix string // of Error()
	}{
		{
			name:   "relative path",
			cfg:    "{\n  \"ignition\": {\"version\": \"3.4.0\"},\n  \"storage\": {\"files\": [\n    {\"path\": \"etc/hostname\", \"contents\": {\"source\": \"data:,x\"}}\n  ]}\n}",
			want:   []report.Entry{{File: "master.ign", Path: "$.storage.files.0.path", Line: 4, Column: 14, Message: "path not absolute"}},
			is:     ignerrors.ErrInvalid,
			prefix: "master.ign:4:14: $.storage.files.0.path: path not absolute",
		},
		{
			name:   "spec 2 version",
			cfg:    "{\n  \"ignition\": {\n    \"version\": \"2.2.0\"\n  }\n}",
			want:   []report.Entry{{File: "master.ign", Path: "$.ignition.version", Line: 3, Column: 16, Message: `unsupported config version "2.2.0": want 3.0.0 to 3.5.0`}},
			is:     ignerrors.ErrUnknownVersion,
			prefix: `master.ign:3:16: $.ignition.version: unsupported config version "2.2.0"`,
		},
		{
			name: "future version",
			cfg:  `{"storage":{},"ignition":{"config":{},"version":"3.9.0"}}`,
			want: []report.Entry{{File: "master.ign", Path: "$.ignition.version", Line: 1, Column: 49, Message: `unsupported config version "3.9.0": want 3.0.0 to 3.5.0`}},
			is:   ignerrors.ErrUnknownVersion,
		},
		{
			name: "version not semver",
			cfg:  `{"ignition":{"version":"three"}}`,
			want: []report.Entry{{File: "master.ign", Path: "$.ignition.version", Line: 1, Column: 24, Message: `invalid config version (couldn't parse) "three": want 3.0.0 to 3.5.0`}},
			is:   ignerrors.ErrInvalidVersion,
		},
		{
			name: "no version",
			cfg:  `{"ignition":{}}`,
			want: []report.Entry{{File: "master.ign", Path: "$.ignition", Line: 1, Column: 13, Message: "no ignition.version: invalid config version (couldn't parse)"}},
			is:   ignerrors.ErrInvalidVersion,
		},
		{
			name: "empty",
			cfg:  ``,
			want: []report.Entry{{File: "master.ign", Path: "$", Message: "not a config (empty)"}},
			is:   ignerrors.ErrEmpty,
		},
		{
			name: "not JSON",
			cfg:  "{\"ignition\":\n {\"version\": 3.4.0}}",
			// Ignition points just past the offending second dot.
			want: []report.Entry{{File: "master.ign", Path: "$", Line: 2, Column: 18, Message: "invalid character '.' after object key:value pair"}},
			is:   ignerrors.ErrInvalid,
		},
		{
			name: "truncated",
			cfg:  `{"ignition":{"version":"3.4.0"}`,
			want: []report.Entry{{File: "master.ign", Path: "$", Line: 1, Column: 32, Message: "unexpected end of JSON input"}},
			is:   ignerrors.ErrInvalid,
		},
		{
			name: "every fatal entry in the report's order",
			cfg:  `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"a"},{"path":"/b"},{"path":"/b"}]},"systemd":{"units":[{"name":"x"}]}}`,
			want: []report.Entry{
				{File: "master.ign", Path: "$.storage.files.0.path", Line: 1, Column: 61, Message: "path not absolute"},
				{File: "master.ign", Path: "$.systemd.units.0.name", Line: 1, Column: 124, Message: "invalid systemd unit extension"},
				{File: "master.ign", Path: "$.storage.files.2", Line: 1, Column: 81, Message: "duplicate entry defined"},
			},
			is: ignerrors.ErrInvalid,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check("master.ign", []byte(tt.cfg))
			var ce *CheckError
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v, want a *CheckError", err)
			}
			if ce.File != "master.ign" {
				t.Errorf("File = %q, want master.ign", ce.File)
			}
			if d := cmp.Diff(tt.want, ce.Problems); d != "" {
				t.Errorf("Problems (-want +got):\n%s", d)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.is)
			}
			if tt.prefix != "" && !strings.HasPrefix(err.Error(), tt.prefix) {
				t.Errorf("Error() = %q, want it to start with %q", err, tt.prefix)
			}
		})
	}
}

func TestAddFilesKeepsVersionAndReplacesPaths(t *testing.T) {
	role := []byte(`{"ignition":{"version":"3.2.0","config":{"merge":[{"source":"https://api-int.edge.example.com:22623/config/master"}]}},` +
		`"storage":{"files":[{"path":"/etc/hostname","contents":{"source":"data:,old"},"mode":420,"overwrite":true},{"path":"/etc/keep","contents":{"source":"data:,k"}}]}}`)
	b, err := hostConfig(role, host{id: "h1", hostname: "node-1", role: "master"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check("h1", b); err != nil {
		t.Fatal(err)
	}
	if v := ignVersion(t, b); v != "3.2.0" {
		t.Errorf("version = %q, want the role config's 3.2.0", v)
	}
	cfg := parseIgn(t, "h1", b)
	if len(cfg.Ignition.Config.Merge) != 1 {
		t.Errorf("merge = %v, want the pointer kept", cfg.Ignition.Config.Merge)
	}
	got := filesOf(t, cfg)
	want := map[string]ignFileView{
		"/etc/keep":             {content: "k"},
		"/etc/hostname":         {content: "node-1\n", mode: 0o644},
		"/etc/nodezero/host-id": {content: "h1\n", mode: 0o644},
	}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(ignFileView{})); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
}

func TestAddFilesRejectsOddShapes(t *testing.T) {
	for _, raw := range []string{`[]`, `null`, `{"storage":[]}`, `{"storage":{"files":{}}}`} {
		if _, err := addFiles([]byte(raw), []ignFile{file("/a", 0o644, nil)}); err == nil {
			t.Errorf("addFiles(%s) succeeded, want an error", raw)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"ignition":{"version":"3.4.0"}}`,
		`{"ignition":{"version":"2.2.0"}}`,
		`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"a"}]}}`,
		`{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["k"]}]}}`,
		`{"ignition":{"version":"3.1.0","config":{"merge":[{"source":"http://x/"}]}}}`,
		`{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["a"]},"systemd":{"units":[{"name":"a.service","enabled":true}]}}`,
		`{"ignition":`, ``, `null`, `{"ignition":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		err := Check("f.ign", raw)
		_, _, perr := v3_5.ParseCompatibleVersion(raw)
		if (err == nil) != (perr == nil) {
			t.Fatalf("Check = %v but Ignition says %v", err, perr)
		}
		if err == nil {
			return
		}
		var ce *CheckError
		if !errors.As(err, &ce) || len(ce.Problems) == 0 {
			t.Fatalf("Check = %#v, want a *CheckError with problems", err)
		}
		if !errors.Is(err, perr) {
			t.Errorf("Check's error does not wrap Ignition's %v", perr)
		}
		lines := strings.Count(string(raw), "\n") + 1
		for _, p := range ce.Problems {
			if p.Line < 0 || p.Line > lines || !strings.HasPrefix(p.Path, "$") {
				t.Errorf("problem %+v is outside the input of %d lines", p, lines)
			}
		}
		if !strings.HasPrefix(err.Error(), "f.ign:") {
			t.Errorf("Error() = %q, want it to name the file", err)
		}
	})
}

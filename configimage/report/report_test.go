package report

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEntryString: the one place "file:line:col: path: message" is
// written, for entries with and without a file, a line, a column, a path.
func TestEntryString(t *testing.T) {
	tests := []struct {
		name string
		e    Entry
		want string
	}{
		{"everything", Entry{File: "agent-config.yaml", Line: 14, Column: 7, Path: "hosts[1].interfaces[0].macAddress", Message: `invalid MAC "zz"`},
			`agent-config.yaml:14:7: hosts[1].interfaces[0].macAddress: invalid MAC "zz"`},
		{"warning", Entry{File: "install-config.yaml", Line: 11, Column: 3, Path: "controlPlane.replica", Severity: Warning, Message: "unknown field, ignored"},
			"install-config.yaml:11:3: warning: controlPlane.replica: unknown field, ignored"},
		{"file and line", Entry{File: "install-config.yaml", Line: 4, Message: "cannot parse YAML: did not find expected key"},
			"install-config.yaml:4: cannot parse YAML: did not find expected key"},
		{"file only", Entry{File: "install-config.yaml", Message: "Required value: the file is empty; expected a YAML mapping"},
			"install-config.yaml: Required value: the file is empty; expected a YAML mapping"},
		{"file and path", Entry{File: "master.ign", Path: "$", Message: "not a config (empty)"}, "master.ign: $: not a config (empty)"},
		// Without a file (an nmstate document on its own) the line leads.
		{"no file", Entry{Line: 3, Column: 7, Path: "interfaces[0].ipv4.address[0].ip", Message: `invalid IP address "x"`},
			`3:7: interfaces[0].ipv4.address[0].ip: invalid IP address "x"`},
		{"no file, warning", Entry{Line: 3, Column: 7, Path: "interfaces[0].foo", Message: "unknown", Severity: Warning},
			"3:7: warning: interfaces[0].foo: unknown"},
		{"no file, line only", Entry{Line: 1, Message: "invalid YAML: x"}, "1: invalid YAML: x"},
		{"path only", Entry{Path: "hosts[0].hostname", Message: "required"}, "hosts[0].hostname: required"},
		{"message only", Entry{Message: "no position"}, "no position"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.e.String(); got != tc.want {
				t.Errorf("%#v.String() = %q, want %q", tc.e, got, tc.want)
			}
		})
	}
}

func TestReportErr(t *testing.T) {
	rep := Report{Entries: []Entry{
		{File: "b.yaml", Line: 2, Column: 1, Path: "x", Severity: Error, Message: "m2"},
		{File: "a.yaml", Line: 9, Column: 3, Path: "y", Severity: Warning, Message: "m1"},
		{File: "b.yaml", Line: 1, Column: 7, Path: "z", Severity: Error, Message: "m3"},
		{Path: "p", Severity: Error, Message: "m4"},
	}}
	err := rep.Err()
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("errors.Is(%v, ErrInvalid) = false, want true", err)
	}
	want := "p: m4\na.yaml:9:3: warning: y: m1\nb.yaml:1:7: z: m3\nb.yaml:2:1: x: m2"
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	if got := rep.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
	if got := len(rep.Errors()); got != 3 {
		t.Errorf("len(Errors()) = %d, want 3", got)
	}
	if (Report{}).Err() != nil || (Report{}).Lines() != nil {
		t.Errorf("empty report: Err() and Lines() want nil")
	}
	warnOnly := Report{Entries: []Entry{{File: "a.yaml", Severity: Warning, Message: "w"}}}
	if err := warnOnly.Err(); err != nil {
		t.Errorf("Err() of warnings only = %v, want nil: warnings never block", err)
	}
	// An error made of a report's errors leaves its warnings out (what
	// nmstate.HostDirs returns for a document that does not parse).
	errs := (&Invalid{Entries: rep.Errors()}).Error()
	if want := "p: m4\nb.yaml:1:7: z: m3\nb.yaml:2:1: x: m2"; errs != want {
		t.Errorf("Invalid{Errors()}.Error() =\n%s\nwant\n%s (warnings left out)", errs, want)
	}
}

// TestInvalidTitle: a titled error heads its lines, which keep the order
// they were given in.
func TestInvalidTitle(t *testing.T) {
	err := error(&Invalid{Title: "invalid manifests", Entries: []Entry{
		{File: "m/cluster-deployment.yaml", Line: 6, Column: 1, Path: "spec.baseDomain", Message: "required"},
		{File: "m/agent-cluster-install.yaml", Message: "missing: the file is required"},
	}})
	want := "invalid manifests:\nm/cluster-deployment.yaml:6:1: spec.baseDomain: required\nm/agent-cluster-install.yaml: missing: the file is required"
	if got := err.Error(); got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	var inv *Invalid
	if !errors.Is(err, ErrInvalid) || !errors.As(err, &inv) || len(inv.Entries) != 2 {
		t.Errorf("errors.Is/As(%v) = false, want an *Invalid matching ErrInvalid", err)
	}
}

// TestMerge: the same problem found twice at one place is reported once,
// in the first wording; entries without a line are all kept.
func TestMerge(t *testing.T) {
	var rep Report
	rep.Add(Entry{File: "a.yaml", Line: 16, Column: 7, Path: "x.type", Message: `duplicate key "type"`})
	rep.Merge(Report{Entries: []Entry{
		{File: "a.yaml", Line: 16, Column: 7, Path: "x.type", Message: "duplicate field `type`"},
		{File: "a.yaml", Line: 16, Column: 7, Path: "x.type", Severity: Warning, Message: "a warning there"},
		{File: "a.yaml", Path: "x", Message: "no line"},
	}})
	rep.Merge(Report{Entries: []Entry{{File: "a.yaml", Path: "x", Message: "no line"}}})
	want := []string{
		"a.yaml: x: no line",
		"a.yaml: x: no line",
		"a.yaml:16:7: warning: x.type: a warning there", // sorted by message
		`a.yaml:16:7: x.type: duplicate key "type"`,
	}
	if d := cmp.Diff(want, rep.Lines()); d != "" {
		t.Errorf("Merge (-want +got):\n%s", d)
	}
}

func TestPaths(t *testing.T) {
	tests := []struct{ path, parent string }{
		{"hosts[1].interfaces[0].macAddress", "hosts[1].interfaces[0]"},
		{"hosts[1].interfaces[0]", "hosts[1].interfaces"},
		{"hosts[1]", "hosts"},
		{"hosts", ""},
		{"", ""},
		{"metadata.labels.a]", "metadata.labels"}, // a key ending in "]" is no index
	}
	for _, tc := range tests {
		if got := Parent(tc.path); got != tc.parent {
			t.Errorf("Parent(%q) = %q, want %q", tc.path, got, tc.parent)
		}
	}
	if got := Index(Child(Child("", "spec"), "interfaces"), 2); got != "spec.interfaces[2]" {
		t.Errorf("Index(Child(Child(spec), interfaces), 2) = %q, want spec.interfaces[2]", got)
	}
}

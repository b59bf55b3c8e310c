package machine

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

// enumValues returns the string values of the constants of type typ
// declared in the wire sources, read with go/parser so that the test
// checks against the wire package itself rather than a copied list.
func enumValues(t *testing.T, typ string) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("../../wire/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("find wire sources: %v (%d files)", err, len(files))
	}
	vals := map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typ {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					vals[s] = true
				}
			}
		}
	}
	if len(vals) == 0 {
		t.Fatalf("no %s constants found in wire", typ)
	}
	return vals
}

func TestConditionIDsAreV2Enums(t *testing.T) {
	hostIDs := enumValues(t, "HostValidationID")
	clusterIDs := enumValues(t, "ClusterValidationID")
	referenced := 0
	for _, r := range HostRules() {
		for _, id := range r.Cond.IDs() {
			referenced++
			if !hostIDs[id] {
				t.Errorf("host rule %q reads %q, not a wire.HostValidationID value", r.Name, id)
			}
		}
	}
	for _, r := range ClusterRules() {
		for _, id := range r.Cond.IDs() {
			referenced++
			if !clusterIDs[id] {
				t.Errorf("cluster rule %q reads %q, not a wire.ClusterValidationID value", r.Name, id)
			}
		}
	}
	if referenced < 100 {
		t.Errorf("rules reference %d validation IDs, expected the groups' ~100: IDs() lost track", referenced)
	}
}

// TestValidationGroupsPartition checks that every v2 validation ID is
// placed exactly once: in a gating group, handled apart, or not gating.
func TestValidationGroupsPartition(t *testing.T) {
	t.Run("host", func(t *testing.T) {
		groups := map[string][]wire.HostValidationID{
			"HasValidInventory":           HasValidInventory,
			"HasMinRequiredHardware":      HasMinRequiredHardware,
			"RequiredInputFieldsExist":    RequiredInputFieldsExist,
			"IsSufficientForInstall":      IsSufficientForInstall,
			"HostValidationsHandledApart": HostValidationsHandledApart,
			"HostValidationsNotGating":    HostValidationsNotGating,
		}
		placed := map[string]string{}
		for g, ids := range groups {
			for _, id := range ids {
				if prev, dup := placed[string(id)]; dup {
					t.Errorf("%q is in both %s and %s", id, prev, g)
				}
				placed[string(id)] = g
			}
		}
		checkPlaced(t, enumValues(t, "HostValidationID"), placed)
	})
	t.Run("cluster", func(t *testing.T) {
		groups := map[string][]wire.ClusterValidationID{
			"PendingConditions":           PendingConditions,
			"VIPsDefined":                 VIPsDefined,
			"RequiredForInstall":          RequiredForInstall,
			"ClusterValidationsNotGating": ClusterValidationsNotGating,
		}
		placed := map[string]string{}
		for g, ids := range groups {
			for _, id := range ids {
				if prev, dup := placed[string(id)]; dup {
					t.Errorf("%q is in both %s and %s", id, prev, g)
				}
				placed[string(id)] = g
			}
		}
		checkPlaced(t, enumValues(t, "ClusterValidationID"), placed)
	})
}

func checkPlaced(t *testing.T, defined map[string]bool, placed map[string]string) {
	t.Helper()
	for id := range defined {
		if _, ok := placed[id]; !ok {
			t.Errorf("validation %q is in no group", id)
		}
	}
	for id, g := range placed {
		if !defined[id] {
			t.Errorf("%s lists %q, not a v2 enum value", g, id)
		}
	}
}

func TestAbsentValidationPasses(t *testing.T) {
	v := Validations{"has-inventory": false, "connected": true}
	for id, want := range map[string]bool{"has-inventory": false, "connected": true, "hostname-valid": true} {
		if got := v.Passing(id); got != want {
			t.Errorf("Validations.Passing(%q) = %v, want %v", id, got, want)
		}
	}
	// A nil map passes everything: a host with no validation computed yet
	// and all other facts fine is ready.
	got, err := NextHost(hDiscovering, TriggerRefreshHost, hostFacts(func(f *HostFacts) { f.Validations = nil }))
	if err != nil || got.To != hKnown {
		t.Errorf("NextHost(discovering, no validations) = %v, %v; want known", got.To, err)
	}
}

func TestNoTransition(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"install a day-1 host directly", func() error {
			_, err := NextHost(hKnown, TriggerInstallHost, hostFacts(nil))
			return err
		}()},
		{"progress for a known host", func() error {
			_, err := NextHost(hKnown, TriggerHostProgressChanged, hostFacts(func(f *HostFacts) { f.Stage = wire.HostStageInstalling }))
			return err
		}()},
		{"known host whose inventory vanished", func() error {
			// assisted has no rule for this either: known is not a source of
			// "Host reconnected without inventory".
			_, err := NextHost(hKnown, TriggerRefreshHost, hostFacts(func(f *HostFacts) { failHost(f, wire.HostValidationIDHasInventory) }))
			return err
		}()},
		{"unknown trigger", func() error {
			_, err := NextHost(hKnown, HostTrigger("BindHost"), hostFacts(nil))
			return err
		}()},
		{"reset a ready cluster", func() error {
			_, err := NextCluster(cReady, TriggerResetCluster, clusterFacts(nil))
			return err
		}()},
		{"install an insufficient cluster", func() error {
			_, err := NextCluster(cInsufficient, TriggerPrepareForInstallation, clusterFacts(nil))
			return err
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, ErrNoTransition) {
				t.Errorf("error = %v, want ErrNoTransition", tc.err)
			}
		})
	}
}

func TestStatusInfoTruncated(t *testing.T) {
	long := make([]byte, 3000)
	for i := range long {
		long[i] = 'x'
	}
	got, err := NextHost(hInstalling, TriggerHostInstallationFailed, hostFacts(func(f *HostFacts) { f.Reason = string(long) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.StatusInfo) != 2040 {
		t.Errorf("len(StatusInfo) = %d, want 2040", len(got.StatusInfo))
	}
}

// TestDocsUpToDate keeps docs/state-machines in step with the rules.
func TestDocsUpToDate(t *testing.T) {
	for name, want := range Docs() {
		path := filepath.Join("..", "..", "docs", "state-machines", name)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("read %s: %v (run go generate ./daemon/machine)", path, err)
			continue
		}
		if string(got) != want {
			t.Errorf("%s is stale: run go generate ./daemon/machine", path)
		}
	}
}

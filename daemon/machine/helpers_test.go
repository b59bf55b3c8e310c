package machine

import (
	"slices"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// now is the fixed "now" of every test.
var now = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

// hostFacts returns the facts of a connected day-1 master whose validations
// all pass (an empty map passes everything), in a cluster that is still
// collecting hosts, with every timestamp at now; edit adjusts them.
func hostFacts(edit func(*HostFacts)) HostFacts {
	f := HostFacts{
		Now:             now,
		Validations:     Validations{},
		ClusterStatus:   wire.ClusterStatusInsufficient,
		Role:            wire.HostRoleMaster,
		Kind:            wire.HostKindHost,
		StageUpdatedAt:  now,
		StatusUpdatedAt: now,
	}
	if edit != nil {
		edit(&f)
	}
	return f
}

// failHost marks validations as failing.
func failHost(f *HostFacts, ids ...wire.HostValidationID) {
	for _, id := range ids {
		f.Validations[string(id)] = false
	}
}

// clusterFacts returns the facts of an HA cluster (3 control-plane nodes)
// whose validations all pass, with timestamps at now; edit adjusts them.
func clusterFacts(edit func(*ClusterFacts)) ClusterFacts {
	f := ClusterFacts{
		Now:              now,
		Validations:      Validations{},
		Topology:         Topology{ControlPlaneCount: 3},
		StatusUpdatedAt:  now,
		InstallStartedAt: now,
	}
	if edit != nil {
		edit(&f)
	}
	return f
}

func failCluster(f *ClusterFacts, ids ...wire.ClusterValidationID) {
	for _, id := range ids {
		f.Validations[string(id)] = false
	}
}

// hosts builds HostStates: n hosts of role in status.
func hosts(role wire.HostRole, status wire.HostStatus, n int) []HostState {
	out := make([]HostState, n)
	for i := range out {
		out[i] = HostState{Role: role, Status: status}
	}
	return out
}

func concat(parts ...[]HostState) []HostState {
	var out []HostState
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// ruleNames returns the names of rules, failing on duplicates: the
// coverage tests key on them.
func ruleNames[S Status, T ~string, F any](t *testing.T, rules []Rule[S, T, F]) []string {
	t.Helper()
	seen := map[string]bool{}
	var names []string
	for _, r := range rules {
		if seen[r.Name] {
			t.Errorf("duplicate rule name %q", r.Name)
		}
		seen[r.Name] = true
		names = append(names, r.Name)
	}
	return names
}

// checkOverlap asserts that rules want and later both apply to (from,
// trigger, f) and that want comes first: the precondition of an order test.
func checkOverlap[S Status, T ~string, F any](t *testing.T, rules []Rule[S, T, F], from S, trigger T, f F, want, later string) {
	t.Helper()
	pos := map[string]int{}
	for i, r := range rules {
		if r.Name != want && r.Name != later {
			continue
		}
		pos[r.Name] = i
		if r.Trigger != trigger || !slices.Contains(r.From, from) || !r.Cond.Eval(f) {
			t.Errorf("rule %q does not apply to these facts: not an order case", r.Name)
		}
	}
	if len(pos) != 2 {
		t.Fatalf("rules %q and %q not both found", want, later)
	}
	if pos[want] > pos[later] {
		t.Errorf("rule %q (#%d) comes after %q (#%d)", want, pos[want]+1, later, pos[later]+1)
	}
}

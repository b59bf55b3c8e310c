package machine

import (
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// Condition is a named predicate over facts F. Conditions compose with And,
// Or and Not; the composite's name is built from its parts so that a rule's
// condition reads the same in the code, the diagrams and the tests. The zero
// Condition holds always and has an empty name.
//
// Names follow one convention: a kebab-case name is a validation ID read from
// the facts' Validations (IfHost, IfCluster); a camelCase name is a fact
// predicate or a named group such as hasValidInventory.
type Condition[F any] struct {
	name string
	op   string   // " && " or " || " for a composite, "" for an atom
	ids  []string // validation IDs read, for tests and docs
	fn   func(F) bool
}

// Pred returns a condition named name that holds when fn(facts) is true.
func Pred[F any](name string, fn func(F) bool) Condition[F] {
	return Condition[F]{name: name, fn: fn}
}

// Named gives c a name; the result renders as that name alone, the way
// assisted-service names its groups (hasValidInventory, requiredForInstall).
func Named[F any](name string, c Condition[F]) Condition[F] {
	return Condition[F]{name: name, ids: c.ids, fn: c.fn}
}

// Name returns the condition's rendered name, "" for the zero Condition.
func (c Condition[F]) Name() string { return c.name }

// Eval reports whether the condition holds for f.
func (c Condition[F]) Eval(f F) bool {
	if c.fn == nil {
		return true
	}
	return c.fn(f)
}

// IDs returns the validation IDs the condition reads, in first-use order.
func (c Condition[F]) IDs() []string {
	return append([]string(nil), c.ids...)
}

// And holds when every part holds (true for no parts).
func And[F any](parts ...Condition[F]) Condition[F] {
	return join(" && ", parts, func(f F) bool {
		for _, p := range parts {
			if !p.Eval(f) {
				return false
			}
		}
		return true
	})
}

// Or holds when at least one part holds (false for no parts).
func Or[F any](parts ...Condition[F]) Condition[F] {
	return join(" || ", parts, func(f F) bool {
		for _, p := range parts {
			if p.Eval(f) {
				return true
			}
		}
		return false
	})
}

// Not holds when c does not.
func Not[F any](c Condition[F]) Condition[F] {
	return Condition[F]{name: "!" + c.nested(""), ids: c.ids, fn: func(f F) bool { return !c.Eval(f) }}
}

func join[F any](sep string, parts []Condition[F], fn func(F) bool) Condition[F] {
	if len(parts) == 1 {
		return parts[0]
	}
	names := make([]string, 0, len(parts))
	var ids []string
	for _, p := range parts {
		names = append(names, p.nested(sep))
		ids = appendNew(ids, p.ids...)
	}
	return Condition[F]{name: strings.Join(names, sep), op: sep, ids: ids, fn: fn}
}

// nested renders c as a part of a composite joined by sep: in parentheses
// unless c is an atom or joined by the same operator.
func (c Condition[F]) nested(sep string) string {
	if c.op == "" || c.op == sep {
		return c.name
	}
	return "(" + c.name + ")"
}

func appendNew(dst []string, ids ...string) []string {
	for _, id := range ids {
		found := false
		for _, d := range dst {
			if d == id {
				found = true
				break
			}
		}
		if !found {
			dst = append(dst, id)
		}
	}
	return dst
}

// Validations holds validation outcomes keyed by validation ID
// (wire.HostValidationID or wire.ClusterValidationID values): true when the
// validation passes (status success, or disabled by configuration or by the
// cluster's ignore list), false when it fails, is pending or errored.
//
// An ID absent from the map counts as passing: that validation is not
// computed in this build. This keeps the machines usable while the
// validation set grows, at the price that a missing validation can never
// block a host; the validation package owns which IDs it computes.
type Validations map[string]bool

// Passing reports whether validation id passes; absent means passing.
func (v Validations) Passing(id string) bool {
	ok, present := v[id]
	return !present || ok
}

// IfHost holds when host validation id passes (absent counts as passing).
func IfHost(id wire.HostValidationID) Condition[HostFacts] {
	return Condition[HostFacts]{name: string(id), ids: []string{string(id)}, fn: func(f HostFacts) bool {
		return f.Validations.Passing(string(id))
	}}
}

// IfCluster holds when cluster validation id passes (absent counts as passing).
func IfCluster(id wire.ClusterValidationID) Condition[ClusterFacts] {
	return Condition[ClusterFacts]{name: string(id), ids: []string{string(id)}, fn: func(f ClusterFacts) bool {
		return f.Validations.Passing(string(id))
	}}
}

func allHost(name string, ids []wire.HostValidationID) Condition[HostFacts] {
	parts := make([]Condition[HostFacts], len(ids))
	for i, id := range ids {
		parts[i] = IfHost(id)
	}
	return Named(name, And(parts...))
}

func allCluster(name string, ids []wire.ClusterValidationID) Condition[ClusterFacts] {
	parts := make([]Condition[ClusterFacts], len(ids))
	for i, id := range ids {
		parts[i] = IfCluster(id)
	}
	return Named(name, And(parts...))
}

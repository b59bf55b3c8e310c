package validation

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// statusHidden is assisted's "success-suppress-output": the validation
// passes and is left out of validations_info (a validation that does not
// apply, e.g. cluster checks on a host bound to no cluster). It never
// leaves this package.
const statusHidden wire.ValidationStatus = "success-suppress-output"

// messageDisabled is assisted's text for a validation disabled by
// configuration (DISABLED_HOST_VALIDATIONS / DISABLED_CLUSTER_VALIDATIONS).
const messageDisabled = "Validation disabled by configuration"

// Change is one validation whose status differs between two evaluations.
type Change struct {
	ID       string
	Category wire.ValidationCategory
	Previous wire.ValidationStatus
	Current  wire.ValidationStatus
	Message  string // the current message
}

// FailureWording is how assisted's host_validation_failed and
// cluster_validation_failed events describe the failure: "that used to
// succeed is now failing" after a success, "failed" otherwise.
func (c Change) FailureWording() string {
	if c.Previous == wire.ValidationSuccess {
		return "that used to succeed is now failing"
	}
	return "failed"
}

// Changes is what Diff found.
type Changes struct {
	Failed []Change // now failure, before anything else: *_validation_failed events
	Fixed  []Change // now success, before failure: *_validation_fixed events
	Other  []Change // any other status change (assisted logs it internally)
}

// Diff compares two evaluations the way assisted's reportValidationStatusChanged
// does: only IDs present in both (under the same category) count, a new
// failure is "failed", a success that was a failure is "fixed". Entries come
// in the order of next.
func Diff(prev, next wire.ValidationsInfo) Changes {
	type key struct {
		cat wire.ValidationCategory
		id  string
	}
	before := make(map[key]wire.ValidationStatus, len(prev))
	for _, r := range prev {
		before[key{r.Category, r.ID}] = r.Status
	}
	var ch Changes
	for _, r := range next {
		p, ok := before[key{r.Category, r.ID}]
		if !ok || p == r.Status {
			continue
		}
		c := Change{ID: r.ID, Category: r.Category, Previous: p, Current: r.Status, Message: r.Message}
		switch {
		case r.Status == wire.ValidationFailure:
			ch.Failed = append(ch.Failed, c)
		case r.Status == wire.ValidationSuccess && p == wire.ValidationFailure:
			ch.Fixed = append(ch.Fixed, c)
		default:
			ch.Other = append(ch.Other, c)
		}
	}
	return ch
}

// Report is one evaluation of a host or a cluster.
type Report struct {
	// Results are the entries of validations_info, in emitted order.
	Results wire.ValidationsInfo
	// Conditions says, per validation ID, whether the state machine may
	// treat it as passed: success, a success left out of the output, a
	// disabled validation, or one the cluster's ignore list forces.
	Conditions map[string]bool
	// Preparation is what the preparation checks have shown (hosts only).
	Preparation Preparation
}

// Pass reports whether every listed validation passed. An ID this package
// did not evaluate counts as not passed.
func (r Report) Pass(ids ...string) bool {
	for _, id := range ids {
		if !r.Conditions[id] {
			return false
		}
	}
	return true
}

// Failing returns the IDs whose result is failure, in emitted order.
func (r Report) Failing() []string {
	var ids []string
	for _, res := range r.Results {
		if res.Status == wire.ValidationFailure {
			ids = append(ids, res.ID)
		}
	}
	return ids
}

// IDSet is a set of validation IDs, e.g. the disabled ones.
type IDSet map[string]bool

// NewIDSet returns the set of ids.
func NewIDSet(ids ...string) IDSet {
	s := make(IDSet, len(ids))
	for _, id := range ids {
		s[id] = true
	}
	return s
}

// ParseIDList parses a comma-separated list of validation IDs the way
// assisted decodes DISABLED_HOST_VALIDATIONS: items are trimmed, duplicates
// dropped, an empty item is an error. known, when not nil, rejects IDs it
// does not accept (assisted refuses unknown IDs).
func ParseIDList(value string, known func(string) bool) (IDSet, error) {
	value = strings.TrimSpace(value)
	if value == `""` {
		value = ""
	}
	s := IDSet{}
	if value == "" {
		return s, nil
	}
	for _, item := range strings.Split(value, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("empty validation ID in %q", value)
		}
		if known != nil && !known(item) {
			return nil, fmt.Errorf("validation ID %q is not a known validation", item)
		}
		s[item] = true
	}
	return s, nil
}

// ignoreList is a cluster's ignored_host_validations or
// ignored_cluster_validations: a JSON list of IDs, possibly ["all"].
type ignoreList struct {
	set     bool // the field is non-empty: it overrides the disabled set
	all     bool
	ids     map[string]bool
	refused map[string]bool // never ignorable
}

func parseIgnoreList(s string, nonIgnorable []string) ignoreList {
	l := ignoreList{set: s != "", ids: map[string]bool{}, refused: map[string]bool{}}
	for _, id := range nonIgnorable {
		l.refused[id] = true
	}
	if s == "" {
		return l
	}
	var ids []string
	if err := json.Unmarshal([]byte(s), &ids); err != nil {
		// A malformed list ignores nothing; assisted fails the whole refresh
		// instead, which would freeze the host's status.
		return l
	}
	for _, id := range ids {
		if id == "all" {
			l.all = true
		}
		l.ids[id] = true
	}
	return l
}

func (l ignoreList) ignores(id string) bool {
	if l.refused[id] {
		return false
	}
	return l.all || l.ids[id]
}

package validation

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Status is the outcome of one validation, spelled as assisted-service
// spells it in validations_info.
type Status string

// The statuses of a validation (assisted-service internal/host/validator.go).
const (
	StatusSuccess  Status = "success"
	StatusFailure  Status = "failure"
	StatusPending  Status = "pending"
	StatusError    Status = "error"
	StatusDisabled Status = "disabled"

	// statusHidden is assisted's "success-suppress-output": the validation
	// passes and is left out of validations_info (a validation that does not
	// apply, e.g. cluster checks on a host bound to no cluster).
	statusHidden Status = "success-suppress-output"
)

// Category groups results in validations_info.
type Category string

// Host categories (assisted internal/host/validation_id.go) and cluster
// categories (internal/cluster/validation_id.go).
const (
	CategoryNetwork       Category = "network"
	CategoryHardware      Category = "hardware"
	CategoryOperators     Category = "operators"
	CategoryHostsData     Category = "hosts-data"
	CategoryConfiguration Category = "configuration"
)

// messageDisabled is assisted's text for a validation disabled by
// configuration (DISABLED_HOST_VALIDATIONS / DISABLED_CLUSTER_VALIDATIONS).
const messageDisabled = "Validation disabled by configuration"

// Result is one entry of validations_info. Category is the key the entry is
// listed under; it is not part of the entry's JSON.
type Result struct {
	ID       string   `json:"id"`
	Status   Status   `json:"status"`
	Message  string   `json:"message"`
	Category Category `json:"-"`
}

// MarshalInfo returns the validations_info JSON text for results: an object
// from category to the list of {id, status, message}. Categories come out in
// key order (assisted marshals a Go map) and entries keep the order of
// results within their category.
func MarshalInfo(results []Result) (string, error) {
	groups := make(map[Category][]Result)
	for _, r := range results {
		groups[r.Category] = append(groups[r.Category], r)
	}
	b, err := json.Marshal(groups)
	if err != nil {
		return "", fmt.Errorf("marshal validations_info: %w", err)
	}
	return string(b), nil
}

// ParseInfo reads validations_info JSON text back into results, categories
// in key order and entries in their stored order. An empty string is no
// results.
func ParseInfo(s string) ([]Result, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var groups map[Category][]Result
	if err := json.Unmarshal([]byte(s), &groups); err != nil {
		return nil, fmt.Errorf("parse validations_info: %w", err)
	}
	cats := make([]Category, 0, len(groups))
	for c := range groups {
		cats = append(cats, c)
	}
	sort.Slice(cats, func(i, j int) bool { return cats[i] < cats[j] })
	var out []Result
	for _, c := range cats {
		for _, r := range groups[c] {
			r.Category = c
			out = append(out, r)
		}
	}
	return out, nil
}

// Change is one validation whose status differs between two evaluations.
type Change struct {
	ID       string
	Category Category
	Previous Status
	Current  Status
	Message  string // the current message
}

// FailureWording is how assisted's host_validation_failed and
// cluster_validation_failed events describe the failure: "that used to
// succeed is now failing" after a success, "failed" otherwise.
func (c Change) FailureWording() string {
	if c.Previous == StatusSuccess {
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
func Diff(prev, next []Result) Changes {
	type key struct {
		cat Category
		id  string
	}
	before := make(map[key]Status, len(prev))
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
		case r.Status == StatusFailure:
			ch.Failed = append(ch.Failed, c)
		case r.Status == StatusSuccess && p == StatusFailure:
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
	Results []Result
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
		if res.Status == StatusFailure {
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

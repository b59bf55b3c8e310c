package wire

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ValidationStatus is the outcome of one validation as validations_info
// spells it.
type ValidationStatus string

// The statuses of a validation (assisted-service internal/host/validator.go).
const (
	ValidationSuccess  ValidationStatus = "success"
	ValidationFailure  ValidationStatus = "failure"
	ValidationPending  ValidationStatus = "pending"
	ValidationError    ValidationStatus = "error"
	ValidationDisabled ValidationStatus = "disabled"
)

// Failing reports whether s blocks: failure or error. A pending validation
// waits for data and is not failing; see Met.
func (s ValidationStatus) Failing() bool {
	return s == ValidationFailure || s == ValidationError
}

// Met reports whether s lets a host or cluster go on: success, or disabled
// by configuration.
func (s ValidationStatus) Met() bool {
	return s == ValidationSuccess || s == ValidationDisabled
}

// ValidationCategory is the key validations_info lists an entry under.
type ValidationCategory string

// Host categories (assisted internal/host/validation_id.go) and cluster
// categories (internal/cluster/validation_id.go).
const (
	CategoryNetwork       ValidationCategory = "network"
	CategoryHardware      ValidationCategory = "hardware"
	CategoryOperators     ValidationCategory = "operators"
	CategoryHostsData     ValidationCategory = "hosts-data"
	CategoryConfiguration ValidationCategory = "configuration"
)

// Validation is one entry of validations_info. Category is the key the
// entry is listed under; it is not part of the entry's JSON.
type Validation struct {
	ID       string             `json:"id"`
	Status   ValidationStatus   `json:"status"`
	Message  string             `json:"message"`
	Category ValidationCategory `json:"-"`
}

// ValidationsInfo is a host's or a cluster's validations_info decoded:
// categories in key order, entries in their listed order.
type ValidationsInfo []Validation

// ParseValidationsInfo reads validations_info text. An empty string is no
// validations.
func ParseValidationsInfo(s string) (ValidationsInfo, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var groups map[ValidationCategory][]Validation
	if err := json.Unmarshal([]byte(s), &groups); err != nil {
		return nil, fmt.Errorf("parse validations_info: %w", err)
	}
	cats := make([]ValidationCategory, 0, len(groups))
	for c := range groups {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	var out ValidationsInfo
	for _, c := range cats {
		for _, v := range groups[c] {
			v.Category = c
			out = append(out, v)
		}
	}
	return out, nil
}

// Marshal returns the validations_info text: an object from category to
// the list of {id, status, message}, categories in key order (assisted
// marshals a Go map) and entries in the order of v within their category.
func (v ValidationsInfo) Marshal() (string, error) {
	groups := make(map[ValidationCategory][]Validation)
	for _, r := range v {
		groups[r.Category] = append(groups[r.Category], r)
	}
	b, err := json.Marshal(groups)
	if err != nil {
		return "", fmt.Errorf("marshal validations_info: %w", err)
	}
	return string(b), nil
}

// Failing returns the entries whose status is failure or error.
func (v ValidationsInfo) Failing() ValidationsInfo {
	return v.filter(func(r Validation) bool { return r.Status.Failing() })
}

// Unmet returns the entries that hold a host or cluster back: every status
// but success and disabled (pending included).
func (v ValidationsInfo) Unmet() ValidationsInfo {
	return v.filter(func(r Validation) bool { return !r.Status.Met() })
}

func (v ValidationsInfo) filter(keep func(Validation) bool) ValidationsInfo {
	var out ValidationsInfo
	for _, r := range v {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

package tui

// Validations as the dashboard shows them: read from validations_info
// through wire, ordered for a person at the rack, grouped and summed up.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// Validation statuses as the service writes them in validations_info.
// The console keeps them as text: a status it does not know is shown as
// it came.
const (
	valSuccess  = string(wire.ValidationSuccess)
	valFailure  = string(wire.ValidationFailure)
	valPending  = string(wire.ValidationPending)
	valError    = string(wire.ValidationError)
	valDisabled = string(wire.ValidationDisabled)
)

// validation is one entry of a host's or the cluster's validations_info.
type validation struct {
	Category string
	ID       string
	Status   string
	Message  string
}

// failing reports whether v keeps something from going on: failure or error.
func (v validation) failing() bool { return wire.ValidationStatus(v.Status).Failing() }

// categoryOrder ranks the categories of validations_info: what a person
// fixes at the rack first. Unknown categories come last, by name.
var categoryOrder = map[string]int{
	"hardware": 0, "network": 1, "hosts-data": 2, "configuration": 3, "operators": 4,
}

// parseValidations reads validations_info, a JSON object category →
// [{id, status, message}]. The result is ordered by category (categoryOrder)
// and, inside one, as the service listed them. "" holds no validations.
func parseValidations(info string) ([]validation, error) {
	vi, err := wire.ParseValidationsInfo(info)
	if err != nil {
		return nil, err
	}
	var out []validation
	for _, v := range vi {
		out = append(out, validation{Category: string(v.Category), ID: v.ID, Status: string(v.Status), Message: v.Message})
	}
	slices.SortStableFunc(out, func(a, b validation) int { return compareCategories(a.Category, b.Category) })
	return out, nil
}

func compareCategories(a, b string) int {
	ra, okA := categoryOrder[a]
	rb, okB := categoryOrder[b]
	if !okA {
		ra = len(categoryOrder)
	}
	if !okB {
		rb = len(categoryOrder)
	}
	return cmp.Or(cmp.Compare(ra, rb), strings.Compare(a, b))
}

// statusRank orders validations failing first: failure and error, then
// pending, success, disabled and anything else.
func statusRank(status string) int {
	switch status {
	case valFailure, valError:
		return 0
	case valPending:
		return 1
	case valSuccess:
		return 2
	}
	return 3
}

// failingValidations returns the failing entries of vals, in their order.
func failingValidations(vals []validation) []validation {
	var out []validation
	for _, v := range vals {
		if v.failing() {
			out = append(out, v)
		}
	}
	return out
}

// validationGroup is one category of a host's validations.
type validationGroup struct {
	Category string
	Items    []validation
}

// groupValidations groups vals (as parseValidations orders them) by
// category: the categories holding a failure first, and inside each the
// failing ones first, then pending, passing and disabled ones.
func groupValidations(vals []validation) []validationGroup {
	var groups []validationGroup
	for _, v := range vals {
		if n := len(groups); n > 0 && groups[n-1].Category == v.Category {
			groups[n-1].Items = append(groups[n-1].Items, v)
			continue
		}
		groups = append(groups, validationGroup{Category: v.Category, Items: []validation{v}})
	}
	worst := func(g validationGroup) int {
		r := 3
		for _, v := range g.Items {
			r = min(r, statusRank(v.Status))
		}
		return r
	}
	for _, g := range groups {
		slices.SortStableFunc(g.Items, func(a, b validation) int { return cmp.Compare(statusRank(a.Status), statusRank(b.Status)) })
	}
	slices.SortStableFunc(groups, func(a, b validationGroup) int { return cmp.Compare(worst(a), worst(b)) })
	return groups
}

// validationLine is "✖ message", with the status word where the symbol
// alone would not say it (error, disabled), and the id when withID.
func validationLine(v validation, withID bool) string {
	var b strings.Builder
	b.WriteString(stateSymbol(v.Status))
	b.WriteByte(' ')
	if withID {
		b.WriteString(v.ID)
		b.WriteString(": ")
	}
	switch v.Status {
	case valError, valDisabled:
		b.WriteString(v.Status)
		if v.Message != "" {
			b.WriteString(", ")
		}
	}
	msg := v.Message
	if msg == "" && !withID {
		msg = v.ID
	}
	b.WriteString(msg)
	return b.String()
}

// stateSymbol is the symbol of a validation status.
func stateSymbol(status string) string {
	switch status {
	case valSuccess:
		return "✓"
	case valFailure, valError:
		return "✖"
	case valPending:
		return "…"
	}
	return "-"
}

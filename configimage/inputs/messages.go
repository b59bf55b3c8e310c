package inputs

import (
	"fmt"
	"strconv"
	"strings"
)

// Messages in the wording of k8s.io/apimachinery field.Error, which
// openshift-install prints (field.Invalid, field.Required, ...).

func msgInvalid(value any, detail string) string {
	s := "Invalid value: " + formatValue(value)
	if detail != "" {
		s += ": " + detail
	}
	return s
}

func msgRequired(detail string) string {
	if detail == "" {
		return "Required value"
	}
	return "Required value: " + detail
}

func msgForbidden(detail string) string { return "Forbidden: " + detail }

func msgDuplicate(value any) string { return "Duplicate value: " + formatValue(value) }

func msgTooMany(n, max int) string {
	return fmt.Sprintf("Too many: %d: must have at most %d items", n, max)
}

func msgNotSupported(value any, supported []string) string {
	q := make([]string, len(supported))
	for i, s := range supported {
		q[i] = strconv.Quote(s)
	}
	return "Unsupported value: " + formatValue(value) + ": supported values: " + strings.Join(q, ", ")
}

// formatValue renders a value as field.Error does: strings quoted, numbers
// and booleans bare, string lists as Go would print them.
func formatValue(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "[]string{" + strings.Join(q, ", ") + "}"
	case *int64:
		if x == nil {
			return "null"
		}
		return strconv.FormatInt(*x, 10)
	case redacted:
		return `"<redacted>"`
	default:
		return fmt.Sprint(x)
	}
}

// redacted stands for a secret value in a message (pull secret, passwords).
type redacted struct{}

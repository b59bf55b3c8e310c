package inputs

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalid is matched (errors.Is) by the error Report.Err returns when the
// report holds at least one error entry.
var ErrInvalid = errors.New("invalid configuration")

// Severity says whether an entry blocks (error) or only informs (warning).
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Entry is one problem found in an input file. Line and Column are 1-based;
// 0 means the position is unknown (a config built in Go, not loaded).
type Entry struct {
	File     string
	Line     int
	Column   int
	Path     string // field path, e.g. hosts[1].interfaces[0].macAddress
	Severity Severity
	Message  string // e.g. Invalid value: "zz": address zz: invalid MAC address
}

// String formats the entry as "file:line:col: path: message"; warnings read
// "file:line:col: warning: path: message".
func (e Entry) String() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
			if e.Column > 0 {
				b.WriteString(":" + strconv.Itoa(e.Column))
			}
		}
		b.WriteString(": ")
	}
	if e.Severity == SeverityWarning {
		b.WriteString("warning: ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Report collects every problem found in the inputs, errors and warnings.
// The zero value is an empty report.
type Report struct {
	Entries []Entry
}

// HasErrors reports whether any entry is an error.
func (r Report) HasErrors() bool {
	for _, e := range r.Entries {
		if e.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Errors returns the error entries, sorted.
func (r Report) Errors() []Entry { return r.filter(SeverityError) }

// Warnings returns the warning entries, sorted.
func (r Report) Warnings() []Entry { return r.filter(SeverityWarning) }

func (r Report) filter(s Severity) []Entry {
	var out []Entry
	for _, e := range r.Sorted() {
		if e.Severity == s {
			out = append(out, e)
		}
	}
	return out
}

// Sorted returns the entries ordered by file, line, column, then path and
// message, so output is stable whatever order the rules ran in.
func (r Report) Sorted() []Entry {
	out := append([]Entry(nil), r.Entries...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Column != b.Column {
			return a.Column < b.Column
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Message < b.Message
	})
	return out
}

// Error formats every entry, sorted, one per line (warnings included, marked
// "warning:"), so a person can fix the files in one pass.
func (r Report) Error() string {
	lines := make([]string, 0, len(r.Entries))
	for _, e := range r.Sorted() {
		lines = append(lines, e.String())
	}
	return strings.Join(lines, "\n")
}

// Lines returns Error() split into lines (empty for an empty report).
func (r Report) Lines() []string {
	if len(r.Entries) == 0 {
		return nil
	}
	return strings.Split(r.Error(), "\n")
}

// Err returns nil when the report has no errors, and otherwise an error whose
// text is the whole report and which matches ErrInvalid.
func (r Report) Err() error {
	if !r.HasErrors() {
		return nil
	}
	return reportError{r}
}

// Merge appends the entries of o, but one problem per place: an entry of
// o at a position and path r already reports, with the same severity, is
// the same problem found twice (a duplicate key seen by the loader and by
// the nmstate check) and is left out, so the first wording stands.
func (r *Report) Merge(o Report) {
	type place struct {
		file         string
		line, column int
		path         string
		sev          Severity
	}
	have := make(map[place]bool, len(r.Entries))
	for _, e := range r.Entries {
		if e.Line > 0 {
			have[place{e.File, e.Line, e.Column, e.Path, e.Severity}] = true
		}
	}
	for _, e := range o.Entries {
		if e.Line > 0 && have[place{e.File, e.Line, e.Column, e.Path, e.Severity}] {
			continue
		}
		r.Entries = append(r.Entries, e)
	}
}

type reportError struct{ r Report }

func (e reportError) Error() string        { return e.r.Error() }
func (e reportError) Is(target error) bool { return target == ErrInvalid }

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

package report

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// Severity says whether an entry blocks (Error) or only informs (Warning).
type Severity int

// Severities. The zero value is Error.
const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Entry is one problem found in an input. Line and Column are 1-based; 0
// means the position is unknown (a value built in Go, not loaded, or a
// problem with the file as a whole).
type Entry struct {
	File     string
	Line     int
	Column   int
	Path     string // field path, e.g. hosts[1].interfaces[0].macAddress
	Severity Severity
	Message  string // e.g. Invalid value: "zz": address zz: invalid MAC address
}

// String formats the entry as "file:line:col: path: message"; warnings
// read "file:line:col: warning: path: message". Unknown parts are left
// out: an entry without a file starts at its line ("3:7: path: message").
func (e Entry) String() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":")
		}
	}
	if e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line))
		if e.Column > 0 {
			b.WriteString(":" + strconv.Itoa(e.Column))
		}
	}
	if e.File != "" || e.Line > 0 {
		b.WriteString(": ")
	}
	if e.Severity == Warning {
		b.WriteString("warning: ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Report collects every problem found in the inputs, errors and warnings,
// in the order they were found. The zero value is an empty report.
type Report struct {
	Entries []Entry
}

// Add appends entries.
func (r *Report) Add(e ...Entry) { r.Entries = append(r.Entries, e...) }

// HasErrors reports whether any entry is an error.
func (r Report) HasErrors() bool {
	for _, e := range r.Entries {
		if e.Severity == Error {
			return true
		}
	}
	return false
}

// Errors returns the error entries, sorted.
func (r Report) Errors() []Entry { return r.filter(Error) }

// Warnings returns the warning entries, sorted.
func (r Report) Warnings() []Entry { return r.filter(Warning) }

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

// String formats every entry, sorted, one per line (warnings included,
// marked "warning:"), so a person can fix the files in one pass.
func (r Report) String() string { return lines(r.Sorted()) }

// Lines returns String() split into lines (nil for an empty report).
func (r Report) Lines() []string {
	if len(r.Entries) == 0 {
		return nil
	}
	return strings.Split(r.String(), "\n")
}

// Err returns nil when the report has no errors, and otherwise an *Invalid
// holding every entry, sorted, which matches ErrInvalid.
func (r Report) Err() error {
	if !r.HasErrors() {
		return nil
	}
	return &Invalid{Entries: r.Sorted()}
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

// ErrInvalid is matched (errors.Is) by every *Invalid.
var ErrInvalid = errors.New("invalid input")

// Invalid is a report that blocks, as an error. Its text is Title and a
// colon on a line of its own when Title is set, then one line per entry in
// the order of Entries.
type Invalid struct {
	Title   string // e.g. "invalid manifests"; "" for none
	Entries []Entry
}

func (e *Invalid) Error() string {
	if e.Title == "" {
		return lines(e.Entries)
	}
	return e.Title + ":\n" + lines(e.Entries)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Invalid) Is(target error) bool { return target == ErrInvalid }

func lines(es []Entry) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, "\n")
}

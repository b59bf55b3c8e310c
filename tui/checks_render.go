package tui

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The checks page's texts, agent-tui's where it has them (reference
// docs/reference/abi-on-host.md §12.4).
const (
	checksTitle       = "Agent installer network boot setup"
	checksPullTitle   = "Release image URL"
	checksOtherTitle  = "Additional checks"
	checksErrorsTitle = "Check Errors"
	splashText        = "Please wait, collecting initial check results"
	checksHelp        = "Tab/arrows move   Enter select   c configure network   q quit"
	checksHelpNoNet   = "Tab/arrows move   Enter select   q quit"

	buttonConfigure = "<Configure Network>"
	buttonQuit      = "<Quit>"
	buttonYes       = "<Yes>"
	buttonNo        = "<No>"
	buttonOk        = "<Ok>"

	// maxCheckErrors bounds the "Check Errors" text; agent-tui resets its
	// log at this size.
	maxCheckErrors = 10000
	// maxCheckOutput bounds one check's output in it: the end of the
	// output, where commands print why they failed.
	maxCheckOutput = 2000
)

// checkRow is one row of a checks table: its state told by a symbol and a
// word, then what was checked.
type checkRow struct {
	State  CheckState
	Symbol string // "✓", "✖", "…"
	Word   string // "passed", "failed", "checking"
	Text   string
}

func newCheckRow(state CheckState, text string) checkRow {
	r := checkRow{State: state, Text: text}
	switch state {
	case CheckPassed:
		r.Symbol, r.Word = "✓", "passed"
	case CheckFailed:
		r.Symbol, r.Word = "✖", "failed"
	default:
		r.Symbol, r.Word = "…", "checking"
	}
	return r
}

// primaryCheck is the check that decides the flow: the release image
// pull. ok is false when none is configured.
func primaryCheck(checks []Check) (Check, bool) {
	for _, c := range checks {
		if c.ID == CheckReleaseImagePull {
			return c, true
		}
	}
	return Check{}, false
}

// checksOutcome is what the flow goes by: known once the release image
// pull has a result, passed when that result passed. Without a pull check
// every check has to have run, and all of them to have passed.
func checksOutcome(checks []Check, results map[CheckID]CheckResult) (known, passed bool) {
	if c, ok := primaryCheck(checks); ok {
		r, ok := results[c.ID]
		return ok, ok && r.State == CheckPassed
	}
	if len(checks) == 0 {
		return false, false
	}
	passed = true
	for _, c := range checks {
		r, ok := results[c.ID]
		if !ok {
			return false, false
		}
		passed = passed && r.State == CheckPassed
	}
	return true, passed
}

// pullRow is the "Release image URL" table's row: the image and the
// state the flow goes by.
func pullRow(image string, checks []Check, results map[CheckID]CheckResult) checkRow {
	if image == "" {
		if c, ok := primaryCheck(checks); ok {
			image = c.Title
		}
	}
	known, passed := checksOutcome(checks, results)
	switch {
	case !known:
		return newCheckRow(CheckPending, image)
	case passed:
		return newCheckRow(CheckPassed, image)
	default:
		return newCheckRow(CheckFailed, image)
	}
}

// otherRows are the "Additional checks" rows: every check but the pull,
// in the configured order.
func otherRows(checks []Check, results map[CheckID]CheckResult) []checkRow {
	var rows []checkRow
	for _, c := range checks {
		if c.ID == CheckReleaseImagePull {
			continue
		}
		state := CheckPending
		if r, ok := results[c.ID]; ok {
			state = r.State
		}
		rows = append(rows, newCheckRow(state, c.Title))
	}
	return rows
}

// failureHeading names a failed check in "Check Errors" with agent-tui's
// words for its four checks.
func failureHeading(c Check) string {
	switch c.ID {
	case CheckReleaseImagePull:
		return "release image pull error"
	case CheckDNS:
		return "nslookup failure"
	case CheckPing:
		return "ping failure"
	case CheckHTTP:
		return "http server not responding"
	}
	return c.Title + " failure"
}

// checkErrorsText is the "Check Errors" text: each failing check's
// heading, error and the end of its output, the pull first.
//
// agent-tui appends every failure to a log it clears at 10 000
// characters, so a check that recovered still shows its old error and the
// newest failure is at the bottom, out of sight. This shows the checks'
// current failures instead, bounded the same way.
func checkErrorsText(checks []Check, results map[CheckID]CheckResult) string {
	var b strings.Builder
	write := func(c Check) {
		r, ok := results[c.ID]
		if !ok || r.State != CheckFailed {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(failureHeading(c) + ":")
		if r.Err != "" {
			b.WriteString(" " + r.Err)
		}
		b.WriteString("\n")
		if out := strings.TrimSpace(r.Output); out != "" {
			b.WriteString(outputTail(out, maxCheckOutput) + "\n")
		}
	}
	if c, ok := primaryCheck(checks); ok {
		write(c)
	}
	for _, c := range checks {
		if c.ID != CheckReleaseImagePull {
			write(c)
		}
	}
	return errorsTruncate(b.String(), maxCheckErrors)
}

// outputTail is the last n bytes of s, cut at a line start when there is one,
// marked with "…" when cut.
func outputTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return "…\n" + strings.ToValidUTF8(s, "")
}

// errorsTruncate is the first n bytes of s, marked with "…" when cut.
func errorsTruncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "\n…"
}

// countdownText is the "checks passed" dialog's text with the seconds
// left.
func countdownText(left time.Duration) string {
	return "Agent-based installer connectivity checks passed. No additional network configuration is required. " +
		"Do you still wish to modify the network configuration for this host?\n\n" +
		"This prompt will timeout in " + secondsLeft(left) + "."
}

// secondsLeft says how long a countdown has left, in whole seconds
// rounded up: "20 seconds", "1 second".
func secondsLeft(left time.Duration) string {
	n := int(math.Ceil(left.Seconds()))
	if n < 0 {
		n = 0
	}
	if n == 1 {
		return "1 second"
	}
	return fmt.Sprintf("%d seconds", n)
}

// checkResult makes the result of one run of c.
func checkResult(c Check, output string, err error, at time.Time) CheckResult {
	r := CheckResult{ID: c.ID, Title: c.Title, State: CheckPassed, Output: output, At: at}
	if err != nil {
		r.State = CheckFailed
		r.Err = errFirstLine(err.Error())
	}
	return r
}

func errFirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

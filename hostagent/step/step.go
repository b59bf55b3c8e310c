// Package step is the contract between the agent's instruction loop and
// the code that runs one step: the Func signature and the exit code of a
// step that could not run. Every step package (netcheck, dnscheck,
// timesync, installer…) and the simulated agent implement it; hostagent's
// registry dispatches to it. It imports nothing of this module.
package step

import "context"

// ExitNotRun is the exit code of a step that could not run: an unknown step
// type or invalid args. The real agent replies -1 in both cases
// (docs/reference/agent-and-installer.md §1.7).
const ExitNotRun = -1

// Func runs one step type. output is the step's stdout (usually a JSON
// document), stderr its diagnostics, exitCode 0 on success. It validates
// its own args and answers NotRun when they are invalid. It must return
// soon after ctx is cancelled.
type Func func(ctx context.Context, args []string) (output string, stderr string, exitCode int)

// NotRun is the reply of a step that could not run because of err.
func NotRun(err error) (output, stderr string, exitCode int) {
	return "", err.Error(), ExitNotRun
}

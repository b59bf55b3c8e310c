package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// JSON inside JSON (transcript §7.3): an instruction's args elements, a step
// reply's output and next_step_runner_command.args[0] are JSON documents
// carried as JSON strings. These helpers do the inner level.

// ErrNoOutput is returned when a step reply carries no output: on the wire a
// missing output means the step failed (transcript §3, ntp-synchronizer).
var ErrNoOutput = errors.New("step reply has no output")

// EncodeEmbedded returns v as compact JSON text, ready to be one
// instruction arg or a reply's output.
func EncodeEmbedded(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encode embedded json: %w", err)
	}
	return string(b), nil
}

// MustEncodeEmbedded is EncodeEmbedded for values that always marshal (the
// wire structs of this package); it panics otherwise.
func MustEncodeEmbedded(v any) string {
	s, err := EncodeEmbedded(v)
	if err != nil {
		panic(err)
	}
	return s
}

// DecodeEmbedded decodes JSON text s into v. Unknown fields are ignored, as
// go-openapi's models do; trailing data after the document is an error.
func DecodeEmbedded(s string, v any) error {
	if err := DecodeOne(strings.NewReader(s), v); err != nil {
		return fmt.Errorf("decode embedded json: %w", err)
	}
	return nil
}

// ErrTrailingData is DecodeOne's error for anything but white space after
// the document.
var ErrTrailingData = errors.New("trailing data after the document")

// DecodeOne decodes the one JSON document r holds into v: anything but
// white space after it, a stray closing bracket included (which
// Decoder.More would let pass), is ErrTrailingData; an error reading r
// there (a body over its limit) is returned as it is.
func DecodeOne(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		return err
	}
	_, err := dec.Token()
	var syn *json.SyntaxError
	switch {
	case err == io.EOF:
		return nil
	case err == nil || errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF):
		return ErrTrailingData
	}
	return err
}

// DecodeStepArg decodes args[0] of an instruction whose single arg is JSON
// text (every step but inventory, whose arg is the host id). It fails unless
// there is exactly one arg, with the message the real agent gives
// ("<name> cmd accepts 1 params in args, given args [...]").
func DecodeStepArg(stepType StepType, args []string, v any) error {
	if len(args) != 1 {
		return fmt.Errorf("%s cmd accepts 1 params in args, given args %v", stepType, args)
	}
	if err := DecodeEmbedded(args[0], v); err != nil {
		return fmt.Errorf("%s args: %w", stepType, err)
	}
	return nil
}

// DecodeStepOutput decodes the output of reply into v. An empty output is
// ErrNoOutput.
func DecodeStepOutput(reply StepReply, v any) error {
	if reply.Output == "" {
		return fmt.Errorf("%s reply %s: %w", reply.StepType, reply.StepID, ErrNoOutput)
	}
	if err := DecodeEmbedded(reply.Output, v); err != nil {
		return fmt.Errorf("%s reply %s output: %w", reply.StepType, reply.StepID, err)
	}
	return nil
}

// ParseStepReply decodes a step reply body as the agent sends it. Fields
// with zero values are omitted on the wire (transcript §1.3): a missing or
// null exit_code means 0, a missing output or error means "".
func ParseStepReply(body []byte) (StepReply, error) {
	var w struct {
		StepType StepType `json:"step_type"`
		StepID   string   `json:"step_id"`
		ExitCode *int64   `json:"exit_code"`
		Output   *string  `json:"output"`
		Error    *string  `json:"error"`
	}
	if err := DecodeEmbedded(string(body), &w); err != nil {
		return StepReply{}, fmt.Errorf("parse step reply: %w", err)
	}
	r := StepReply{StepType: w.StepType, StepID: w.StepID}
	if w.ExitCode != nil {
		r.ExitCode = *w.ExitCode
	}
	if w.Output != nil {
		r.Output = *w.Output
	}
	if w.Error != nil {
		r.Error = *w.Error
	}
	return r, nil
}

// Succeeded reports whether the step exited 0.
func (r StepReply) Succeeded() bool { return r.ExitCode == 0 }

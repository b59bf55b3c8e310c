package dhcplease

import (
	"context"
	"errors"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// exitNotRun is hostagent.ExitNotRun (-1), repeated here because this
// package may import only daemon/v2.
const exitNotRun = -1

// Step returns the dhcp-lease-allocate step in hostagent.StepFunc's shape.
// Its single arg is a DHCPAllocationRequest as JSON text; its output the
// DHCPAllocationResponse. Args that do not decode or validate answer
// exitNotRun with the reason in stderr, as the real agent does; so does an
// interface that does not exist (the agent fails the same way before it
// runs dhclient). A failed exchange answers 1.
func Step(opts Options) func(ctx context.Context, args []string) (output, stderr string, exitCode int) {
	return func(ctx context.Context, args []string) (string, string, int) {
		req, err := DecodeArgs(args)
		if err != nil {
			return "", err.Error(), exitNotRun
		}
		resp, err := Allocate(ctx, req, opts)
		if err != nil {
			if errors.Is(err, ErrNoInterface) || errors.Is(err, ErrInvalidRequest) {
				return "", err.Error(), exitNotRun
			}
			return "", err.Error(), 1
		}
		out, err := v2.EncodeEmbedded(resp)
		if err != nil {
			return "", err.Error(), 1
		}
		return out, "", 0
	}
}

// DecodeArgs decodes and validates the step's args: exactly one, a
// DHCPAllocationRequest as JSON text. Errors wrap ErrInvalidRequest.
func DecodeArgs(args []string) (v2.DHCPAllocationRequest, error) {
	var req v2.DHCPAllocationRequest
	if err := v2.DecodeStepArg(v2.StepTypeDHCPLeaseAllocate, args, &req); err != nil {
		return v2.DHCPAllocationRequest{}, errors.Join(ErrInvalidRequest, err)
	}
	if err := Validate(req); err != nil {
		return v2.DHCPAllocationRequest{}, err
	}
	return req, nil
}

package dhcplease

import (
	"context"
	"errors"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// Step returns the dhcp-lease-allocate step in step.Func's shape.
// Its single arg is a DHCPAllocationRequest as JSON text; its output the
// DHCPAllocationResponse. Args that do not decode or validate answer
// step.ExitNotRun with the reason in stderr, as the real agent does; so does an
// interface that does not exist (the agent fails the same way before it
// runs dhclient). A failed exchange answers 1.
func Step(opts Options) func(ctx context.Context, args []string) (output, stderr string, exitCode int) {
	return func(ctx context.Context, args []string) (string, string, int) {
		req, err := DecodeArgs(args)
		if err != nil {
			return step.NotRun(err)
		}
		resp, err := Allocate(ctx, req, opts)
		if err != nil {
			if errors.Is(err, ErrNoInterface) || errors.Is(err, ErrInvalidRequest) {
				return step.NotRun(err)
			}
			return "", err.Error(), 1
		}
		out, err := wire.EncodeEmbedded(resp)
		if err != nil {
			return "", err.Error(), 1
		}
		return out, "", 0
	}
}

// DecodeArgs decodes and validates the step's args: exactly one, a
// DHCPAllocationRequest as JSON text. Errors wrap ErrInvalidRequest.
func DecodeArgs(args []string) (wire.DHCPAllocationRequest, error) {
	var req wire.DHCPAllocationRequest
	if err := wire.DecodeStepArg(wire.StepTypeDHCPLeaseAllocate, args, &req); err != nil {
		return wire.DHCPAllocationRequest{}, errors.Join(ErrInvalidRequest, err)
	}
	if err := Validate(req); err != nil {
		return wire.DHCPAllocationRequest{}, err
	}
	return req, nil
}

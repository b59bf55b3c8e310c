package netcheck

import (
	"context"
	"errors"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// exitFailed is the exit code of a step that ran and failed.
const exitFailed = 1

// ConnectivityStep is the connectivity-check step: one JSON arg, a
// ConnectivityCheckParams; output a ConnectivityReport.
func ConnectivityStep(opts Options) step.Func {
	return func(ctx context.Context, args []string) (string, string, int) {
		var params wire.ConnectivityCheckParams
		if err := wire.DecodeStepArg(wire.StepTypeConnectivityCheck, args, &params); err != nil {
			return step.NotRun(err)
		}
		return reply(ConnectivityCheck(ctx, params, opts))
	}
}

// FreeAddressesStep is the free-network-addresses step: one JSON arg, a
// list of IPv4 CIDRs; output FreeNetworksAddresses.
func FreeAddressesStep(opts Options) step.Func {
	return func(ctx context.Context, args []string) (string, string, int) {
		var req wire.FreeAddressesRequest
		if err := wire.DecodeStepArg(wire.StepTypeFreeNetworkAddresses, args, &req); err != nil {
			return step.NotRun(err)
		}
		return reply(FreeAddresses(ctx, req, opts))
	}
}

// VerifyVIPsStep is the verify-vips step: one JSON arg, a VerifyVIPsRequest;
// output a VerifyVIPsResponse.
func VerifyVIPsStep(opts Options) step.Func {
	return func(ctx context.Context, args []string) (string, string, int) {
		var req wire.VerifyVIPsRequest
		if err := wire.DecodeStepArg(wire.StepTypeVerifyVIPs, args, &req); err != nil {
			return step.NotRun(err)
		}
		return reply(VerifyVIPs(ctx, req, opts))
	}
}

// reply turns a result into a step reply: bad arguments are step.ExitNotRun, any
// other error (a refusal included) exit 1 with the reason in stderr.
func reply[T any](v T, err error) (string, string, int) {
	if err != nil {
		if errors.Is(err, ErrInvalidArgs) {
			return step.NotRun(err)
		}
		return "", err.Error(), exitFailed
	}
	out, err := wire.EncodeEmbedded(v)
	if err != nil {
		return "", err.Error(), exitFailed
	}
	return out, "", 0
}

package netcheck

import (
	"context"
	"errors"

	v2 "github.com/nodezero/nodezero/daemon/v2"
)

// StepFunc has the shape of hostagent.StepFunc (this package may not import
// hostagent): output, stderr and exit code of one step.
type StepFunc = func(ctx context.Context, args []string) (output string, stderr string, exitCode int)

// ExitNotRun is hostagent.ExitNotRun: the step could not run (bad args).
const ExitNotRun = -1

// exitFailed is the exit code of a step that ran and failed.
const exitFailed = 1

// ConnectivityStep is the connectivity-check step: one JSON arg, a
// ConnectivityCheckParams; output a ConnectivityReport.
func ConnectivityStep(opts Options) StepFunc {
	return func(ctx context.Context, args []string) (string, string, int) {
		var params v2.ConnectivityCheckParams
		if err := v2.DecodeStepArg(v2.StepTypeConnectivityCheck, args, &params); err != nil {
			return "", err.Error(), ExitNotRun
		}
		return reply(ConnectivityCheck(ctx, params, opts))
	}
}

// FreeAddressesStep is the free-network-addresses step: one JSON arg, a
// list of IPv4 CIDRs; output FreeNetworksAddresses.
func FreeAddressesStep(opts Options) StepFunc {
	return func(ctx context.Context, args []string) (string, string, int) {
		var req v2.FreeAddressesRequest
		if err := v2.DecodeStepArg(v2.StepTypeFreeNetworkAddresses, args, &req); err != nil {
			return "", err.Error(), ExitNotRun
		}
		return reply(FreeAddresses(ctx, req, opts))
	}
}

// VerifyVIPsStep is the verify-vips step: one JSON arg, a VerifyVIPsRequest;
// output a VerifyVIPsResponse.
func VerifyVIPsStep(opts Options) StepFunc {
	return func(ctx context.Context, args []string) (string, string, int) {
		var req v2.VerifyVIPsRequest
		if err := v2.DecodeStepArg(v2.StepTypeVerifyVIPs, args, &req); err != nil {
			return "", err.Error(), ExitNotRun
		}
		return reply(VerifyVIPs(ctx, req, opts))
	}
}

// reply turns a result into a step reply: bad arguments are ExitNotRun, any
// other error (a refusal included) exit 1 with the reason in stderr.
func reply[T any](v T, err error) (string, string, int) {
	if err != nil {
		if errors.Is(err, ErrInvalidArgs) {
			return "", err.Error(), ExitNotRun
		}
		return "", err.Error(), exitFailed
	}
	out, err := v2.EncodeEmbedded(v)
	if err != nil {
		return "", err.Error(), exitFailed
	}
	return out, "", 0
}

package installer

import (
	"context"
	"errors"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// Step adapts Run to the agent's step shape. The step's single arg is the
// InstallCmdRequest as JSON; newConfig builds the rest of the Config for it
// (the service bound to the host, the writer, the rebooter). The step
// blocks until Run returns: exit code 0 once the reboot is scheduled, 1 on
// a failure (already reported as stage Failed), -1 for an invalid request
// or a Config newConfig cannot build. stderr carries the error.
func Step(newConfig func(req wire.InstallCmdRequest) (Config, error)) func(ctx context.Context, args []string) (string, string, int) {
	return func(ctx context.Context, args []string) (string, string, int) {
		var req wire.InstallCmdRequest
		if err := wire.DecodeStepArg(wire.StepTypeInstall, args, &req); err != nil {
			return step.NotRun(err)
		}
		if _, err := validateRequest(req); err != nil {
			return step.NotRun(err)
		}
		cfg, err := newConfig(req)
		if err != nil {
			return "", "install: " + err.Error(), step.ExitNotRun
		}
		cfg.Request = req
		switch err := Run(ctx, cfg); {
		case err == nil:
			return "", "", 0
		case errors.Is(err, ErrInvalidRequest):
			return step.NotRun(err)
		default:
			return "", err.Error(), 1
		}
	}
}

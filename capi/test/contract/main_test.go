package contract

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/nodezero/nodezero/capi/internal/controllers/bootstrap"
	"github.com/nodezero/nodezero/capi/internal/controllers/controlplane"
	"github.com/nodezero/nodezero/capi/internal/testenv"
)

// The providers' requeue intervals here: short, so a scenario's waits are
// bounded by a second or two beyond what the watches report.
const (
	waitInterval = time.Second
	pollInterval = time.Second
)

// One management cluster for the package: scenarios share it, each in a
// namespace of its own.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{Setup: func(ctx context.Context, env *testenv.Env) error {
		if err := (&bootstrap.Reconciler{WaitInterval: waitInterval, PollInterval: pollInterval}).SetupWithManager(ctx, env.Manager); err != nil {
			return err
		}
		return (&controlplane.Reconciler{WaitInterval: waitInterval, PollInterval: pollInterval}).SetupWithManager(ctx, env.Manager)
	}}))
}

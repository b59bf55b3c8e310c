package hostagent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

func TestStepsRun(t *testing.T) {
	failing := func(context.Context) (*wire.Inventory, error) { return nil, errors.New("ghw: no /sys") }
	empty := func(context.Context) (*wire.Inventory, error) { return nil, nil }
	tests := []struct {
		name      string
		steps     *Steps
		stepType  wire.StepType
		args      []string
		want      string
		wantErr   string
		wantCode  int
		wantNoOut bool
	}{
		{"inventory", NewSteps(collectTestInventory), wire.StepTypeInventory, []string{testHost},
			`{"hostname":"tx-host-0","cpu":{"count":2,"architecture":"x86_64"}}`, "", 0, false},
		{"inventory upper-case uuid", NewSteps(collectTestInventory), wire.StepTypeInventory, []string{"5F0C1A2E-6B1D-4F3A-9C2E-0A1B2C3D4E03"},
			`{"hostname":"tx-host-0","cpu":{"count":2,"architecture":"x86_64"}}`, "", 0, false},
		{"inventory no args", NewSteps(collectTestInventory), wire.StepTypeInventory, nil,
			"", "inventory cmd accepts only 1 params in args and it should be UUID, given args []", -1, true},
		{"inventory two args", NewSteps(collectTestInventory), wire.StepTypeInventory, []string{testHost, testHost},
			"", "inventory cmd accepts only 1 params in args and it should be UUID, given args [" + testHost + " " + testHost + "]", -1, true},
		{"inventory collect error", NewSteps(failing), wire.StepTypeInventory, []string{testHost},
			"", "collect inventory: ghw: no /sys", 1, true},
		{"inventory nil", NewSteps(empty), wire.StepTypeInventory, []string{testHost},
			"", "collect inventory: no inventory returned", 1, true},
		{"no inventory func", NewSteps(nil), wire.StepTypeInventory, []string{testHost},
			"", "failed to find action for step type inventory", -1, true},
		{"unknown", NewSteps(collectTestInventory), wire.StepTypeTangConnectivityCheck, []string{"{}"},
			"", "failed to find action for step type tang-connectivity-check", -1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := tc.steps.Run(context.Background(), tc.stepType, tc.args)
			if out != tc.want || stderr != tc.wantErr || code != tc.wantCode {
				t.Errorf("Run(%s, %q) = %q, %q, %d; want %q, %q, %d", tc.stepType, tc.args, out, stderr, code, tc.want, tc.wantErr, tc.wantCode)
			}
		})
	}
}

func TestStepsHandleAndPanic(t *testing.T) {
	s := NewSteps(nil)
	s.Handle(wire.StepTypeVerifyVIPs, func(context.Context, []string) (string, string, int) { panic("nil map") })
	_, stderr, code := s.Run(context.Background(), wire.StepTypeVerifyVIPs, nil)
	if code != step.ExitNotRun || stderr != "step verify-vips panicked: nil map" {
		t.Errorf("panicking step = %q, %d; want the panic as stderr, %d", stderr, code, step.ExitNotRun)
	}
	s.Handle(wire.StepTypeVerifyVIPs, func(context.Context, []string) (string, string, int) { return "[]", "", 0 })
	if out, _, code := s.Run(context.Background(), wire.StepTypeVerifyVIPs, nil); out != "[]" || code != 0 {
		t.Errorf("replaced step = %q, %d; want [], 0", out, code)
	}
}

func TestIsUUID(t *testing.T) {
	for s, want := range map[string]bool{
		testHost:                                true,
		"deaddead-dead-dead-dead-deaddeaddead":  true,
		"5f0c1a2e6b1d4f3a9c2e0a1b2c3d4e03":      false,
		"5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e0g":  false,
		"5f0c1a2e-6b1d-4f3a-9c2e_0a1b2c3d4e03":  false,
		"{5f0c1a2e-6b1d-4f3a-9c2e-0a1b2c3d4e0}": false,
		"":                                      false,
	} {
		if got := isUUID(s); got != want {
			t.Errorf("isUUID(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestReplyCacheTTLAndClear(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 56, 0, 0, time.UTC)
	c := newReplyCache(time.Hour, func() time.Time { return now })
	c.store(wire.StepTypeInventory, "a")
	checks := []struct {
		name    string
		advance time.Duration
		clear   bool
		output  string
		want    bool
	}{
		{"same output", 0, false, "a", true},
		{"other output", 0, false, "b", false},
		{"other type has none", 0, false, "", false},
		{"just inside ttl", 59 * time.Minute, false, "a", true},
		{"expired", 2 * time.Minute, false, "a", false},
	}
	for _, ck := range checks {
		now = now.Add(ck.advance)
		st := wire.StepTypeInventory
		if ck.name == "other type has none" {
			st = wire.StepTypeVerifyVIPs
		}
		if got := c.has(st, ck.output); got != ck.want {
			t.Errorf("%s: has(%s, %q) = %v, want %v", ck.name, st, ck.output, got, ck.want)
		}
	}
	c.store(wire.StepTypeInventory, "a")
	c.clear()
	if c.has(wire.StepTypeInventory, "a") {
		t.Error("has() after clear = true, want false")
	}
}

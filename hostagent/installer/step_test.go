package installer

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

func TestStep(t *testing.T) {
	arg := func(req wire.InstallCmdRequest) []string {
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		return []string{string(b)}
	}
	badDevice := testRequest(wire.HostRoleMaster, 3)
	badDevice.BootDevice = "sda"
	tests := []struct {
		name      string
		args      []string
		writeErr  error
		configErr error
		wantExit  int
		wantBuilt bool // newConfig called
	}{
		{name: "installs", args: arg(testRequest(wire.HostRoleMaster, 3)), wantExit: 0, wantBuilt: true},
		{name: "write fails", args: arg(testRequest(wire.HostRoleMaster, 3)), writeErr: errors.New("disk gone"), wantExit: 1, wantBuilt: true},
		{name: "no args", args: nil, wantExit: -1},
		{name: "two args", args: []string{"{}", "{}"}, wantExit: -1},
		{name: "not json", args: []string{"{"}, wantExit: -1},
		{name: "invalid request", args: arg(badDevice), wantExit: -1},
		{name: "no config", args: arg(testRequest(wire.HostRoleMaster, 3)), configErr: errors.New("no service"), wantExit: -1, wantBuilt: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := &fakeService{}
			rb := &fakeRebooter{}
			built := false
			step := Step(func(req wire.InstallCmdRequest) (Config, error) {
				built = true
				cfg := testConfig(t, req, svc, &fakeWriter{err: tt.writeErr}, rb)
				cfg.Request = wire.InstallCmdRequest{} // Step sets it
				return cfg, tt.configErr
			})
			out, stderr, exit := step(context.Background(), tt.args)
			if exit != tt.wantExit {
				t.Fatalf("step = %q, %q, %d; want exit %d", out, stderr, exit, tt.wantExit)
			}
			if built != tt.wantBuilt {
				t.Errorf("newConfig called = %v, want %v", built, tt.wantBuilt)
			}
			if (exit == 0) != (stderr == "") {
				t.Errorf("stderr = %q with exit %d", stderr, exit)
			}
			if exit == 0 && len(rb.Calls()) != 1 {
				t.Errorf("exit 0 without a reboot: %v", rb.Calls())
			}
		})
	}
}

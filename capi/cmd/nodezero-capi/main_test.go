package main

import (
	"flag"
	"io"
	"slices"
	"testing"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		controllers []string
		metrics     string
		probe       string
		wantErr     bool
	}{
		{name: "defaults", controllers: []string{"bootstrap", "controlplane"}, metrics: "0", probe: "127.0.0.1:8081"},
		{name: "one controller", args: []string{"--controllers=controlplane"}, controllers: []string{"controlplane"}, metrics: "0", probe: "127.0.0.1:8081"},
		{name: "repeated controller", args: []string{"--controllers", "bootstrap, bootstrap"}, controllers: []string{"bootstrap"}, metrics: "0", probe: "127.0.0.1:8081"},
		{name: "metrics on loopback", args: []string{"--metrics-bind-address=127.0.0.1:8443", "--health-probe-bind-address=0"},
			controllers: []string{"bootstrap", "controlplane"}, metrics: "127.0.0.1:8443", probe: "0"},
		{name: "unknown controller", args: []string{"--controllers=bootstrap,infra"}, wantErr: true},
		{name: "no controller", args: []string{"--controllers=,"}, wantErr: true},
		{name: "metrics on every interface", args: []string{"--metrics-bind-address=:8080"}, wantErr: true},
		{name: "probes on 0.0.0.0", args: []string{"--health-probe-bind-address=0.0.0.0:8081"}, wantErr: true},
		{name: "metrics on ::", args: []string{"--metrics-bind-address=[::]:8080"}, wantErr: true},
		{name: "not an address", args: []string{"--metrics-bind-address=8080"}, wantErr: true},
		{name: "stray argument", args: []string{"serve"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(flag.NewFlagSet("nodezero-capi", flag.ContinueOnError), tc.args, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseFlags(%q) error = %v, want error %v", tc.args, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if !slices.Equal(o.controllers, tc.controllers) || o.metricsAddr != tc.metrics || o.probeAddr != tc.probe {
				t.Errorf("parseFlags(%q) = controllers %v metrics %q probe %q, want %v %q %q",
					tc.args, o.controllers, o.metricsAddr, o.probeAddr, tc.controllers, tc.metrics, tc.probe)
			}
		})
	}
}

// The scheme knows every kind the reconcilers read or write.
func TestScheme(t *testing.T) {
	s, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, gvk := range []string{"Cluster", "Machine", "MachineDeployment", "NodezeroControlPlane", "NodezeroConfig", "Secret"} {
		found := false
		for k := range s.AllKnownTypes() {
			if k.Kind == gvk {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("scheme lacks %s", gvk)
		}
	}
}

package servicetest

import (
	"context"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

// A cluster registered before a SIGKILL is still there after the restart,
// on the same URL.
func TestKillRestartKeepsTheStore(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	name, version, domain := "c1", "4.20", "example.com"
	c, err := s.Client().RegisterCluster(ctx, wire.ClusterCreateParams{Name: name, OpenshiftVersion: version, BaseDNSDomain: domain, PullSecret: pullSecret})
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL
	s.Kill()
	if _, err := s.Client().GetCluster(ctx, c.ID); err == nil {
		t.Fatal("the killed service still answers")
	}
	s.Restart()
	if s.URL != url {
		t.Errorf("restarted on %s, want %s", s.URL, url)
	}
	got, err := s.Client().GetCluster(ctx, c.ID)
	if err != nil {
		t.Fatalf("after restart: %v", err)
	}
	if got.Name != name {
		t.Errorf("cluster name %q, want %q", got.Name, name)
	}
}

var pullSecret = `{"auths":{"registry.example.com":{"auth":"dXNlcjpwYXNz"}}}`

package node

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage/machineimage"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// TestHubAgent: a host booted from a Machine's config image
// (configimage/machineimage) is an agent of a hub service running
// elsewhere: it registers straight into the image's infra-env with the
// agent token alone (the image holds no user token), reports its
// inventory, and never becomes node zero.
func TestHubAgent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := slog.New(slog.DiscardHandler)

	// The hub: `nodezero service`'s code, on a loopback port.
	dir := t.TempDir()
	m, _, err := auth.LoadOrCreate(filepath.Join(dir, "auth"))
	if err != nil {
		t.Fatal(err)
	}
	listening := make(chan net.Addr, 1)
	svcCtx, stopSvc := context.WithCancel(ctx)
	svcDone := make(chan error, 1)
	go func() {
		svcDone <- Serve(svcCtx, ServiceConfig{Dir: dir, Listen: "127.0.0.1:0", PublicKeyPEM: m.PublicKeyPEM, Logger: log,
			Listening: func(a net.Addr) { listening <- a }})
	}()
	t.Cleanup(func() {
		stopSvc()
		if err := <-svcDone; err != nil && svcCtx.Err() == nil {
			t.Errorf("service: %v", err)
		}
	})
	var base string
	select {
	case a := <-listening:
		base = "http://" + a.String()
	case err := <-svcDone:
		t.Fatalf("service ended: %v", err)
	}
	user, err := wire.NewClient(base, wire.WithUserToken(m.Tokens[auth.User]))
	if err != nil {
		t.Fatal(err)
	}
	name, version, domain := "hub", "4.18", "example.com"
	const pullSecret = `{"auths":{"quay.io":{"auth":"ZmFrZTpmYWtl"}}}`
	cl, err := user.RegisterCluster(ctx, wire.ClusterCreateParams{Name: name, OpenshiftVersion: version, BaseDNSDomain: domain,
		PullSecret: pullSecret})
	if err != nil {
		t.Fatal(err)
	}
	// A second infra-env made first: a host that took the first listed one
	// (node zero's way) would land in it.
	decoyName := "decoy"
	if _, err := user.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{Name: decoyName,
		PullSecret: pullSecret, OpenshiftVersion: version}); err != nil {
		t.Fatal(err)
	}

	ieName := "ns-worker-0"
	ie, err := user.RegisterInfraEnv(ctx, wire.InfraEnvCreateParams{Name: ieName, ClusterID: &cl.ID,
		PullSecret: pullSecret, OpenshiftVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	img, err := machineimage.Image(machineimage.Spec{ServiceURL: base, AgentToken: m.Tokens[auth.Agent], InfraEnvID: ie.ID,
		Machine: onhost.MachineBinding{Namespace: "ns", Name: "worker-0", UID: "u-1", Cluster: "hub"}})
	if err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(t.TempDir(), "bootstrap.iso")
	if err := os.WriteFile(iso, img, 0o600); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	hostCtx, stopHost := context.WithCancel(ctx)
	hostDone := make(chan error, 1)
	go func() {
		hostDone <- Run(hostCtx, Options{Root: root, ConfigImages: []string{iso}, HardwareRoot: filepath.Join("..", "testdata", "hw", "worker-1"),
			Disks: t.TempDir(), Payload: t.TempDir(), Listen: "127.0.0.1:0", ConfigInterval: 50 * time.Millisecond,
			AgentInterval: 100 * time.Millisecond, Logger: log})
	}()
	t.Cleanup(func() {
		stopHost()
		if err := <-hostDone; err != nil {
			t.Errorf("host: %v", err)
		}
	})

	var h *wire.Host
	for h == nil || h.Inventory == "" {
		hosts, err := user.ListHosts(ctx, ie.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(hosts) > 1 {
			t.Fatalf("%d hosts in the infra-env, want 1", len(hosts))
		}
		if len(hosts) == 1 {
			h = hosts[0]
		}
		select {
		case err := <-hostDone:
			t.Fatalf("host ended before its inventory reached the hub: %v", err)
		case <-ctx.Done():
			t.Fatalf("no host with an inventory in infra-env %s (last %+v)", ie.ID, h)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if h.ClusterID == nil || *h.ClusterID != cl.ID {
		t.Errorf("host's cluster %v, want %s", h.ClusterID, cl.ID)
	}
	clusters, err := user.ListClusters(ctx)
	if err != nil || len(clusters) != 1 {
		t.Errorf("clusters %v (%v): the host made one of its own", clusters, err)
	}
	if _, err := os.Stat(filepath.Join(root, onhost.Node0Path)); err == nil {
		t.Error("the host recorded itself as node zero")
	}
	if _, err := os.Stat(filepath.Join(root, onhost.MachineBindingPath)); err != nil {
		t.Errorf("machine binding: %v", err)
	}
}

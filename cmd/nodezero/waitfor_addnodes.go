package main

// `nodezero wait-for add-nodes`: follow hosts added to an installed
// cluster, as `oc adm node-image monitor` does (package watch's AddNodes).

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/nodezero/nodezero/configimage/addnodes"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/watch"
)

func runWaitForAddNodes(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "wait-for add-nodes", "follow hosts booted from a node config image until they are Ready nodes of the cluster, as oc adm node-image monitor: each through its own node zero, then the kubelet's CSRs and the Node in the cluster's API", "--dir DIR --hosts NAME=IP[,NAME=IP...] [--kubeconfig FILE] [--approve]",
		"nodezero wait-for add-nodes --dir ./day2 --hosts extra-worker-0=192.168.111.90 --kubeconfig ./mycluster/auth/kubeconfig --approve")
	dir := fs.String("dir", ".", "the directory of 'nodezero create node-config-image --dir': the image's user token ("+addnodes.StateFile+")")
	hosts := fs.String("hosts", "", "the added hosts, hostname=address each (the hostname as nodes-config.yaml names it; its node zero is at http://address:"+nodeZeroPort+")")
	kubeconfig := fs.String("kubeconfig", "", "the installed cluster's admin kubeconfig (default: $KUBECONFIG; without one, the hosts are followed only to added-to-existing-cluster)")
	approve := fs.Bool("approve", false, "approve the added hosts' pending CSRs (client and serving), as oc adm certificate approve")
	timeout := fs.Duration("timeout", 60*time.Minute, "give up after this long")
	interval := fs.Duration("interval", watch.DefaultAddNodesPoll, "how often the hosts and the cluster are asked")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	o := watch.AddNodesOptions{Approve: *approve, Out: stdout, Poll: *interval}
	for _, kv := range strings.Split(*hosts, ",") {
		if kv == "" {
			continue
		}
		name, ip, ok := strings.Cut(kv, "=")
		addr, err := netip.ParseAddr(ip)
		if !ok || name == "" || err != nil {
			return fmt.Errorf("wait-for add-nodes: --hosts %q: want hostname=address, e.g. extra-worker-0=192.168.111.90", kv)
		}
		o.Hosts = append(o.Hosts, watch.AddNodesHost{Name: name, URL: "http://" + net.JoinHostPort(addr.String(), nodeZeroPort)})
	}
	if len(o.Hosts) == 0 {
		fs.Usage()
		return fmt.Errorf("wait-for add-nodes: --hosts: which hosts? hostname=address each")
	}
	st, err := addnodes.LoadState(*dir)
	if err != nil {
		return fmt.Errorf("wait-for add-nodes: %w", err)
	}
	o.UserToken = st.UserToken()
	kc := *kubeconfig
	if kc == "" {
		kc = os.Getenv("KUBECONFIG")
	}
	if kc != "" {
		cfg, err := kube.LoadKubeconfig(kc)
		if err != nil {
			return fmt.Errorf("wait-for add-nodes: %w", err)
		}
		if o.Kube, err = kube.NewClient(cfg, kube.WithTimeout(10*time.Second)); err != nil {
			return fmt.Errorf("wait-for add-nodes: %w", err)
		}
		defer o.Kube.Close()
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	return watch.AddNodes(ctx, o)
}

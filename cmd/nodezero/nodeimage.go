package main

// `nodezero create node-config-image`: the node config image of day 2,
// as `oc adm node-image create` makes it, from nodes-config.yaml and what
// the installed cluster's API says of it (configimage/addnodes, kube's
// node-joiner reads).

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/configimage/addnodes"
	"github.com/nodezero/nodezero/kube"
)

func runCreateNodeConfigImage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "create node-config-image", "the node config image (node-config.noarch.iso) that adds the hosts of nodes-config.yaml to an installed cluster, as oc adm node-image create", "--dir DIR [--kubeconfig FILE] [flags]",
		"nodezero create node-config-image --dir ./day2 --kubeconfig ./mycluster/auth/kubeconfig")
	dir := fs.String("dir", ".", "directory holding nodes-config.yaml; the image and its tokens are written there")
	kubeconfig := fs.String("kubeconfig", "", "the installed cluster's admin kubeconfig (default: $KUBECONFIG)")
	arch := fs.String("cpu-architecture", "", "the added hosts' architecture (default: nodes-config.yaml's cpuArchitecture, else a control-plane Node's)")
	ttl := fs.Duration("token-ttl", addnodes.DefaultTokenTTL, "how long the image's tokens are valid")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	kc := *kubeconfig
	if kc == "" {
		kc = os.Getenv("KUBECONFIG")
	}
	if kc == "" {
		return fmt.Errorf("create node-config-image: no kubeconfig: give --kubeconfig (the installed cluster's auth/kubeconfig) or set KUBECONFIG")
	}
	cfg, err := kube.LoadKubeconfig(kc)
	if err != nil {
		return fmt.Errorf("create node-config-image: %w", err)
	}
	c, err := kube.NewClient(cfg, kube.WithTimeout(30*time.Second))
	if err != nil {
		return fmt.Errorf("create node-config-image: %w", err)
	}
	defer c.Close()
	info, err := kube.ReadClusterInfo(ctx, c, *arch)
	if err != nil {
		return fmt.Errorf("create node-config-image: the cluster at %s: %w", c.Server(), err)
	}
	res, err := addnodes.Create(ctx, addnodes.Options{Dir: *dir, Cluster: *info, Now: time.Now(), TokenTTL: *ttl, Warnings: stderr})
	if err != nil {
		return fmt.Errorf("create node-config-image: %w", err)
	}
	fmt.Fprintf(stdout, "nodezero create node-config-image: wrote %s (%d bytes) for %d host(s) of cluster %s (%s, %s); tokens valid until %s, kept in %s\n",
		res.Path, res.Size, len(res.Hosts), info.ClusterName, info.ClusterID, info.Version,
		res.State.TokenExpiry.UTC().Format(time.RFC3339), filepath.Join(*dir, addnodes.StateFile))
	return nil
}

package addnodes

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/nodezero/nodezero/kube"
)

// File names in the directory Create works in.
const (
	// ImageName is the node config image, as oc adm node-image create
	// names it.
	ImageName = "node-config.noarch.iso"
	// StateFile keeps the token key, the tokens and the infra-env id
	// (0600), like create config-image's .nodezero_state.json.
	StateFile = ".nodezero_addnodes_state.json"
)

// DefaultTokenTTL is how long the day-2 tokens are valid, as
// oc adm node-image create mints them (docs/reference/abi-on-host.md §13).
const DefaultTokenTTL = 48 * time.Hour

// Options are Create's inputs.
type Options struct {
	// Dir holds nodes-config.yaml; the image and the state file are
	// written there.
	Dir string
	// Cluster is what the installed cluster's API says of itself.
	Cluster kube.ClusterInfo
	// Now is when the tokens are minted (their exp is Now+TokenTTL) and
	// the image's timestamps; zero means time.Now().
	Now time.Time
	// TokenTTL is the tokens' validity; zero means DefaultTokenTTL.
	TokenTTL time.Duration
	// Warnings receives nodes-config.yaml's warnings, one per line; nil
	// discards them.
	Warnings io.Writer
}

// Result is what Create wrote.
type Result struct {
	Path  string   // Dir/node-config.noarch.iso
	Size  int      // its bytes
	Hosts []string // the hosts nodes-config.yaml lists, by hostname
	State *State   // the tokens in the image, as saved in Dir/StateFile
}

// Create reads Dir/nodes-config.yaml and writes Dir/node-config.noarch.iso
// for the cluster o.Cluster describes.
func Create(ctx context.Context, o Options) (*Result, error) {
	return nil, errors.New("create node config image: not implemented yet")
}

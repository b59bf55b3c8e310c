package installfiles

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/nodezero/nodezero/configimage/report"
	"github.com/nodezero/nodezero/wire"
)

// Input is what Generate needs, copied out of the service's model.
type Input struct {
	// Cluster gives the name, base domain, networks, VIPs, platform, SSH
	// key, proxy and install_config_overrides.
	Cluster *wire.Cluster
	// Hosts are the cluster's hosts: id, role (master, worker or arbiter;
	// auto-assign falls back to the suggested role), bootstrap flag,
	// requested hostname and inventory.
	Hosts []*wire.Host
	// PullSecret is the cluster's pull secret JSON.
	PullSecret string
	// AdditionalTrustBundle is PEM, added to the install-config after any
	// bundle the overrides carry (as assisted-service merges CA sources).
	AdditionalTrustBundle string
	// Manifests are the user manifests.
	Manifests []Manifest
	// Installer is the path of the payload's openshift-install; "" selects
	// the built-in generator.
	Installer string
	// TLSDir is the cluster TLS override directory (assisted-service's
	// EPHEMERAL_INSTALLER_CLUSTER_TLS_CERTS_OVERRIDE_DIR: /opt/agent/tls
	// from the config image, with its signers, the kubeadmin password hash
	// and the password). Whichever generator runs, the install uses them:
	// openshift-install gets every regular file of it in its tls/
	// directory and OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS=true, the built-in
	// generator reads them. "" is a service started without a config image:
	// openshift-install mints its own, as without the setting in
	// assisted-service, and the built-in generator mints a set.
	TLSDir string
	// WorkDir is where a scratch directory for the installer run is made
	// (and removed afterwards); "" means the system's temporary directory.
	WorkDir string
	// Rand is the randomness of the built-in generator's cluster ID, infra
	// ID, certificate serials and (without TLSDir) password; nil means
	// crypto/rand. Private keys always come from the system's generator: Go
	// ignores a custom reader for key generation.
	Rand io.Reader
	// Now starts the validity of certificates minted without TLSDir; zero
	// means time.Now().
	Now time.Time
}

// Manifest is a user manifest, placed where openshift-install reads it:
// <Folder>/<FileName> of its directory, /opt/openshift/<Folder>/<FileName>
// on the bootstrap host.
type Manifest struct {
	Folder   string // "manifests" or "openshift"
	FileName string
	Content  []byte
}

// Files are the generated install files.
type Files struct {
	// Cluster holds the cluster files by assisted-service's download names:
	// "install-config.yaml", "bootstrap.ign", "master.ign", "worker.ign",
	// ("arbiter.ign"), "metadata.json", "kubeconfig-noingress",
	// "kubeadmin-password".
	Cluster map[string][]byte
	// Hosts holds each host's whole Ignition config by host id.
	Hosts map[string][]byte
	// Generator says what made them: "openshift-install <version>" or
	// "built-in".
	Generator string
}

// The cluster file names.
const (
	FileInstallConfig     = "install-config.yaml"
	FileBootstrap         = "bootstrap.ign"
	FileMaster            = "master.ign"
	FileWorker            = "worker.ign"
	FileArbiter           = "arbiter.ign"
	FileMetadata          = "metadata.json"
	FileKubeconfig        = "kubeconfig-noingress"
	FileKubeadminPassword = "kubeadmin-password"
)

// GeneratorBuiltIn is Files.Generator for the built-in generator.
const GeneratorBuiltIn = "built-in"

// problems collects what is wrong with the facts Generate was given, as
// report entries without a file or line (the facts come from the store):
// Path names the install-config field ("platform.baremetal.apiVIPs") or
// the host ("hosts[<id>].hostname"). Generate and InstallConfig return
// every problem they find in one *report.Invalid, in the order found, one
// "path: message" line each.
type problems struct{ entries []report.Entry }

func (p *problems) add(field, format string, args ...any) {
	p.entries = append(p.entries, report.Entry{Path: field, Message: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error {
	if len(p.entries) == 0 {
		return nil
	}
	return &report.Invalid{Entries: p.entries}
}

// Generate makes the cluster's install files with the payload's
// openshift-install when in.Installer is set, else with the built-in
// generator. Every Ignition config it returns has passed Check.
func Generate(ctx context.Context, in Input) (*Files, error) {
	if in.Rand == nil {
		in.Rand = rand.Reader
	}
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	p, err := assemble(in)
	if err != nil {
		return nil, err
	}
	var files *Files
	if in.Installer != "" {
		files, err = runInstaller(ctx, in, p)
	} else {
		files, err = builtIn(in, p)
	}
	if err != nil {
		return nil, err
	}
	// The role configs first: the host configs build on them.
	if err := checkConfigs(files.Cluster, func(name string) string { return name }); err != nil {
		return nil, err
	}
	files.Hosts = make(map[string][]byte, len(p.hosts))
	for _, h := range p.hosts {
		b, err := hostConfig(files.Cluster[h.roleFile()], h)
		if err != nil {
			return nil, fmt.Errorf("ignition of host %s: %w", h.id, err)
		}
		files.Hosts[h.id] = b
	}
	if err := checkConfigs(files.Hosts, hostFileName); err != nil {
		return nil, err
	}
	return files, nil
}

// checkConfigs runs Check on every config whose name (nameOf its key) ends
// in .ign, and joins the errors.
func checkConfigs(configs map[string][]byte, nameOf func(key string) string) error {
	var errs []error
	for _, key := range sortedKeys(configs) {
		if name := nameOf(key); strings.HasSuffix(name, ".ign") {
			errs = append(errs, Check(name, configs[key]))
		}
	}
	return errors.Join(errs...)
}

// hostFileName names a host's config in Check's errors, as the service
// stores it.
func hostFileName(id string) string { return "hosts/" + id + ".ign" }

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// plan is the checked input: the hosts with their resolved roles and
// names, and the install-config.
type plan struct {
	hosts []host
	ic    map[string]any // the install-config after the overrides
	icRaw []byte         // ic as YAML
	facts facts
}

// facts are the install-config values the built-in generator uses, read
// from the merged install-config so that overrides count.
type facts struct {
	name, baseDomain string
	pullSecret       string
	sshKeys          []string
	trustBundle      string
}

// host is one host of the cluster with its role resolved.
type host struct {
	id        string
	role      wire.HostRole // master, worker or arbiter
	bootstrap bool
	hostname  string
	inventory *wire.Inventory // nil when the host reported none
}

// roleFile is the cluster file whose config the host is installed with:
// the bootstrap host and a single node get master's, as assisted-service
// does (the bootstrap host pivots to master).
func (h host) roleFile() string {
	switch h.role {
	case wire.HostRoleWorker:
		return FileWorker
	case wire.HostRoleArbiter:
		return FileArbiter
	default:
		return FileMaster
	}
}

// assemble checks the input and builds the install-config, returning every
// problem found.
func assemble(in Input) (*plan, error) {
	if in.Cluster == nil {
		return nil, errors.New("installfiles: no cluster")
	}
	var probs problems
	hosts := planHosts(in.Hosts, &probs)
	checkManifests(in.Manifests, &probs)
	ic := installConfig(in, hosts, &probs)
	if err := probs.err(); err != nil {
		return nil, err
	}
	raw, err := marshalInstallConfig(ic)
	if err != nil {
		return nil, fmt.Errorf("install-config: %w", err)
	}
	return &plan{hosts: hosts, ic: ic, icRaw: raw, facts: factsOf(ic)}, nil
}

// planHosts resolves each host's role and hostname.
func planHosts(in []*wire.Host, probs *problems) []host {
	var hosts []host
	seen := map[string]bool{}
	for i, h := range in {
		if h == nil {
			probs.add(fmt.Sprintf("hosts[%d]", i), "no host")
			continue
		}
		field := fmt.Sprintf("hosts[%s]", h.ID)
		if h.ID == "" {
			probs.add(fmt.Sprintf("hosts[%d].id", i), "required")
			continue
		}
		if seen[h.ID] {
			probs.add(field, "listed twice")
			continue
		}
		seen[h.ID] = true
		hh := host{id: h.ID, bootstrap: h.Bootstrap}
		switch role := effectiveRole(h); role {
		case wire.HostRoleMaster, wire.HostRoleWorker, wire.HostRoleArbiter:
			hh.role = role
		case wire.HostRoleBootstrap:
			hh.role, hh.bootstrap = wire.HostRoleMaster, true
		default:
			probs.add(field+".role", "%q is not master, worker or arbiter", role)
		}
		if h.Inventory != "" {
			var inv wire.Inventory
			if err := json.Unmarshal([]byte(h.Inventory), &inv); err != nil {
				probs.add(field+".inventory", "not JSON: %v", err)
			} else {
				hh.inventory = &inv
			}
		}
		hh.hostname = strings.TrimSpace(h.RequestedHostname)
		if hh.hostname == "" && hh.inventory != nil {
			hh.hostname = strings.TrimSpace(hh.inventory.Hostname)
		}
		switch {
		case hh.hostname == "":
			probs.add(field+".hostname", "required: neither requested_hostname nor the inventory has one")
		case strings.IndexFunc(hh.hostname, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' }) >= 0:
			probs.add(field+".hostname", "%q has a space, control character or slash", hh.hostname)
		}
		hosts = append(hosts, hh)
	}
	return hosts
}

// effectiveRole is the host's role, its suggested role while auto-assign.
func effectiveRole(h *wire.Host) wire.HostRole {
	if h.Role == "" || h.Role == wire.HostRoleAutoAssign {
		return h.SuggestedRole
	}
	return h.Role
}

// checkManifests rejects manifests that cannot be placed in a folder.
func checkManifests(ms []Manifest, probs *problems) {
	seen := map[string]bool{}
	for _, m := range ms {
		field := fmt.Sprintf("manifests[%s/%s]", m.Folder, m.FileName)
		if m.Folder != string(wire.ManifestFolderManifests) && m.Folder != string(wire.ManifestFolderOpenshift) {
			probs.add(field, "folder %q is not manifests or openshift", m.Folder)
		}
		if m.FileName == "" || m.FileName == "." || m.FileName == ".." || strings.ContainsAny(m.FileName, "/\x00") {
			probs.add(field, "file name %q is not a plain file name", m.FileName)
		}
		key := m.Folder + "/" + m.FileName
		if seen[key] {
			probs.add(field, "listed twice")
		}
		seen[key] = true
	}
}

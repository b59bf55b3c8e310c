package assisted

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// hostKey identifies a host: assisted-service keys hosts by infra-env and id.
type hostKey struct{ infraEnvID, id string }

// clusterRec is a cluster as the service holds it: the cluster's own fields
// in c, and what the service computes for it as Go values beside them. c
// carries no hosts and no host counts (they are filled in when a cluster is
// read), and its JSON-text fields validations_info and
// connectivity_majority_groups stay empty: view renders them.
type clusterRec struct {
	c          wire.Cluster
	pullSecret string
	// The DHCP leases of the VIPs (vip_dhcp_allocation), as the agent
	// wrote them; sent back so that the same addresses are renewed.
	apiLease, ingressLease string
	results                wire.ValidationsInfo // the last evaluation
	// groups are the hosts' connectivity majority groups, as the
	// cluster monitor last computed them (majorityGroups).
	groups validation.Reported[*validation.Connectivity]
	docs   clusterDocs
	hosts  map[hostKey]*hostRec
	order  []*hostRec // hosts in sortedHosts order; nil after a host joins or leaves

	// The custom manifests the cluster has, and their source; their
	// content is in the store only (manifests.go).
	manifests map[manifestKey]wire.ManifestSource

	// kubeconfig: the final kubeconfig exists (the installation completed).
	kubeconfig bool

	// prepAttempt numbers the installation preparation under way (not
	// persisted): a result for an older attempt is dropped (prepare.go).
	prepAttempt int64

	// Aggregates for host validations, recomputed by derive.
	// probeTargets counts the hosts a connectivity check probes
	// (connectivityParams), probeChanged when that count last moved.
	probeTargets int
	probeChanged time.Time
	facts        *validation.ClusterFacts
	nameCounts   map[string]int
	factsKey     string
	// memo keeps the cluster's last connectivity aggregates
	// (validation.ClusterMemo; not persisted).
	memo validation.ClusterMemo
	// entries is hostEntries' buffer: every evaluation of a thousand
	// hosts lists them twice (the aggregates, the cluster validations).
	entries []validation.HostEntry
}

// clusterDocs are the JSON texts of a cluster's computed fields as the API
// shows them and the store keeps them, made when the value changes.
type clusterDocs struct {
	validations string // validations_info, of results
	groups      string // connectivity_majority_groups, of groups
}

// clusterDoc is the persisted form of a cluster: the API object plus what
// the API never shows.
type clusterDoc struct {
	Cluster         wire.Cluster `json:"cluster"`
	PullSecret      string       `json:"pull_secret,omitempty"`
	APIVIPLease     string       `json:"api_vip_lease,omitempty"`
	IngressVIPLease string       `json:"ingress_vip_lease,omitempty"`
	Kubeconfig      bool         `json:"kubeconfig,omitempty"`
}

type infraEnvRec struct {
	ie         wire.InfraEnv
	pullSecret string
}

type infraEnvDoc struct {
	InfraEnv   wire.InfraEnv `json:"infra_env"`
	PullSecret string        `json:"pull_secret,omitempty"`
}

// hostRec is a host as the service holds it: the host's own fields in h,
// and what its agent reported and the service computed as Go values beside
// them. The JSON-text fields of h (inventory, validations_info,
// connectivity and the check results) stay empty in memory: view renders
// them, for the API and the store, from the texts made when the values
// changed (docs).
type hostRec struct {
	h       wire.Host
	inv     *wire.Inventory       // nil until the first inventory
	checks  validation.HostChecks // what the host checks reported
	results wire.ValidationsInfo  // the last evaluation
	docs    hostDocs
	agent   agentSession // not persisted

	// conn is the host's connectivity report as the validations read it;
	// nil until the first. Its text is the store's alone
	// (store.HostConnectivity): h.Connectivity stays empty in memory and
	// is filled in from the store when a client asks (connectivity.go).
	conn *validation.ConnReport
	// connSum is the SHA-256 of the last connectivity output the agent
	// posted (not persisted): the same output again is not decoded.
	connSum [32]byte
	// checkEntry is this host as the other hosts' connectivity checks
	// list it (connectivityArgs), made from checkEntryOf: at a thousand
	// hosts each check lists the other 999.
	checkEntry   []byte
	checkEntryOf *wire.Inventory
}

// hostDocs are the JSON texts of a host's typed fields as the API shows
// them and the store keeps them, made once when a value changes (the
// keep* methods): a thousand hosts are listed and written far more often
// than they report.
type hostDocs struct {
	inventory, validations                     string
	freeAddresses, ntpSources, domains, images string
	disks                                      string
}

// agentSession is what the service knows of a host's agent between requests.
type agentSession struct {
	wake      chan struct{}               // closed when a step becomes due
	issued    map[wire.StepType]time.Time // when each step type was last handed out
	issuedFor wire.HostStatus             // the status those steps were for
	pending   map[string]wire.StepType    // step id → type, handed out and not answered
	// probeTargets is the cluster's count of probe targets when the last
	// connectivity check was handed out (see connectivityDue).
	probeTargets int
}

// rendered is the cluster as a wire.Cluster, without hosts: its own fields
// and its computed ones rendered. It is the one place they are: the API's
// clusterView (through view) and the store's row start from it. The copy
// is shallow: marshal it at once, under the model lock.
func (r *clusterRec) rendered() wire.Cluster {
	out := r.c
	out.ValidationsInfo = r.docs.validations
	out.ConnectivityMajorityGroups = r.docs.groups
	return out
}

// view is rendered as a copy that shares nothing with the model.
func (r *clusterRec) view() *wire.Cluster {
	out := r.rendered()
	return cloneJSON(&out)
}

func (r *clusterRec) row() (store.Cluster, error) {
	doc, err := json.Marshal(clusterDoc{Cluster: r.rendered(), PullSecret: r.pullSecret, APIVIPLease: r.apiLease, IngressVIPLease: r.ingressLease, Kubeconfig: r.kubeconfig})
	if err != nil {
		return store.Cluster{}, fmt.Errorf("marshal cluster %s: %w", r.c.ID, err)
	}
	return store.Cluster{
		ID: r.c.ID, Status: string(r.c.Status), StatusInfo: r.c.StatusInfo,
		StatusUpdatedAt: r.c.StatusUpdatedAt.Time(), Doc: doc,
	}, nil
}

func (r *infraEnvRec) row() (store.InfraEnv, error) {
	doc, err := json.Marshal(infraEnvDoc{InfraEnv: r.ie, PullSecret: r.pullSecret})
	if err != nil {
		return store.InfraEnv{}, fmt.Errorf("marshal infra-env %s: %w", r.ie.ID, err)
	}
	return store.InfraEnv{ID: r.ie.ID, ClusterID: r.ie.ClusterID, Doc: doc}, nil
}

// view is the host as a wire.Host: its own fields and its typed ones
// rendered (connectivity aside: its text is the store's alone, see
// connectivity.go). It is the one place they are: the API's hostView, the
// store's row and the installation preparation start from it. The copy
// shares nothing the service changes in place.
func (r *hostRec) view() *wire.Host {
	out := copyHost(&r.h)
	out.Inventory = r.docs.inventory
	out.ValidationsInfo = r.docs.validations
	out.FreeAddresses = r.docs.freeAddresses
	out.NTPSources = r.docs.ntpSources
	out.DomainNameResolutions = r.docs.domains
	out.ImagesStatus = r.docs.images
	out.DisksInfo = r.docs.disks
	return out
}

// hostRow is a host's store row, made from its view.
func hostRow(h *wire.Host) (store.Host, error) {
	doc, err := json.Marshal(h)
	if err != nil {
		return store.Host{}, fmt.Errorf("marshal host %s: %w", h.ID, err)
	}
	cid := ""
	if h.ClusterID != nil {
		cid = *h.ClusterID
	}
	return store.Host{
		ID: h.ID, InfraEnvID: h.InfraEnvID, ClusterID: cid,
		Status: string(h.Status), StatusInfo: h.StatusInfo,
		StatusUpdatedAt: h.StatusUpdatedAt.Time(), CheckedInAt: h.CheckedInAt.Time(), Doc: doc,
	}, nil
}

func (r *hostRec) key() hostKey { return hostKey{r.h.InfraEnvID, r.h.ID} }

func (r *hostRec) clusterID() string {
	if r.h.ClusterID == nil {
		return ""
	}
	return *r.h.ClusterID
}

// name is how events and messages name a host: its requested hostname, the
// inventory hostname, or its id.
func (r *hostRec) name() string {
	if r.h.RequestedHostname != "" {
		return r.h.RequestedHostname
	}
	if r.inv != nil && r.inv.Hostname != "" {
		return r.inv.Hostname
	}
	return r.h.ID
}

// loadHost rebuilds a host record from its row, the document view wrote:
// its JSON-text fields are decoded into the typed ones and kept as their
// texts (its connectivity report is loaded apart, from its own row). The
// document's shape is wire.Host's, so a row written by any earlier build
// loads; a check result whose text does not parse is kept as unreadable,
// which its validation reports.
func loadHost(row store.Host) (*hostRec, error) {
	r := &hostRec{}
	if err := json.Unmarshal(row.Doc, &r.h); err != nil {
		return nil, fmt.Errorf("host %s: %w", row.ID, err)
	}
	if r.h.Inventory != "" {
		inv := new(wire.Inventory)
		if err := json.Unmarshal([]byte(r.h.Inventory), inv); err != nil {
			return nil, fmt.Errorf("host %s inventory: %w", row.ID, err)
		}
		r.inv = inv
	}
	if r.h.ValidationsInfo != "" {
		res, err := wire.ParseValidationsInfo(r.h.ValidationsInfo)
		if err != nil {
			return nil, fmt.Errorf("host %s validations_info: %w", row.ID, err)
		}
		r.results = res
	}
	r.checks = validation.ReadHostChecks(&r.h)
	r.docs = hostDocs{
		inventory: r.h.Inventory, validations: r.h.ValidationsInfo,
		freeAddresses: r.h.FreeAddresses, ntpSources: r.h.NTPSources, domains: r.h.DomainNameResolutions,
		images: r.h.ImagesStatus, disks: r.h.DisksInfo,
	}
	// The texts live in docs only. Connectivity: a doc from before
	// migration 0004 has one left; never trust it.
	r.h.Inventory, r.h.ValidationsInfo, r.h.Connectivity = "", "", ""
	r.h.FreeAddresses, r.h.NTPSources, r.h.DomainNameResolutions = "", "", ""
	r.h.ImagesStatus, r.h.DisksInfo = "", ""
	return r, nil
}

// loadCluster rebuilds a cluster record from its row, as loadHost does.
func loadCluster(row store.Cluster) (*clusterRec, error) {
	var d clusterDoc
	if err := json.Unmarshal(row.Doc, &d); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", row.ID, err)
	}
	r := &clusterRec{c: d.Cluster, pullSecret: d.PullSecret, apiLease: d.APIVIPLease, ingressLease: d.IngressVIPLease, kubeconfig: d.Kubeconfig, hosts: map[hostKey]*hostRec{}}
	if r.c.ValidationsInfo != "" {
		res, err := wire.ParseValidationsInfo(r.c.ValidationsInfo)
		if err != nil {
			return nil, fmt.Errorf("cluster %s validations_info: %w", row.ID, err)
		}
		r.results = res
	}
	r.groups = validation.ReadMajorityGroups(r.c.ConnectivityMajorityGroups)
	r.docs = clusterDocs{validations: r.c.ValidationsInfo, groups: r.c.ConnectivityMajorityGroups}
	r.c.ValidationsInfo, r.c.ConnectivityMajorityGroups = "", ""
	return r, nil
}

func loadInfraEnv(row store.InfraEnv) (*infraEnvRec, error) {
	var d infraEnvDoc
	if err := json.Unmarshal(row.Doc, &d); err != nil {
		return nil, fmt.Errorf("infra-env %s: %w", row.ID, err)
	}
	return &infraEnvRec{ie: d.InfraEnv, pullSecret: d.PullSecret}, nil
}

// sorted returns the cluster's hosts in sortedHosts order, cached until a
// host joins or leaves (their registration times never change).
func (c *clusterRec) sorted() []*hostRec {
	if c.order == nil || len(c.order) != len(c.hosts) {
		c.order = sortedHosts(c.hosts)
	}
	return c.order
}

// addHost and removeHost change the cluster's host set.
func (c *clusterRec) addHost(h *hostRec) {
	if _, ok := c.hosts[h.key()]; ok {
		return
	}
	c.hosts[h.key()] = h
	// A new host usually registered last: keep the order by appending.
	if n := len(c.order); n > 0 && hostLess(c.order[n-1], h) {
		c.order = append(c.order, h)
		return
	}
	c.order = nil
}

func (c *clusterRec) removeHost(h *hostRec) {
	delete(c.hosts, h.key())
	c.order = nil
}

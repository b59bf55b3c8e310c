package watch

// AddNodes is `nodezero wait-for add-nodes`, like `oc adm node-image
// monitor`: it follows hosts added to an installed cluster, each through
// its own node zero (every added host is its own rendezvous host, on
// 127.0.0.1: docs/reference/abi-on-host.md §1.1, §3.7), and then through the
// cluster's Kubernetes API: the kubelet's certificate signing requests
// (approved with Approve, as `oc adm certificate approve` does), the Node
// joining, the Node Ready. Each change is printed once, prefixed by the
// host's name.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/wire"
)

// AddNodesHost is one host being added.
type AddNodesHost struct {
	// Name is its hostname (nodes-config.yaml's): the host's name in its
	// node zero and its Node's name in the cluster.
	Name string
	// URL is its own node zero's service, http://<its address>:8090.
	URL string
	// CACert is the PEM file an https URL is checked with; "" is the
	// system's roots.
	CACert string
}

// AddNodesOptions are one `wait-for add-nodes` run.
type AddNodesOptions struct {
	Hosts []AddNodesHost
	// UserToken is the node config image's user token (the hosts' node
	// zeros check it).
	UserToken string
	// Kube is the installed cluster's API (the admin kubeconfig's); nil
	// follows the hosts to added-to-existing-cluster only.
	Kube *kube.Client
	// Approve approves each host's pending CSRs.
	Approve bool
	// Out gets the lines; nil discards them.
	Out io.Writer
	// Poll is how often every source is asked (DefaultAddNodesPoll when 0).
	Poll time.Duration
	// StuckPolls is how many polls in a row a host must stay insufficient
	// with a hardware validation failing before it is given up
	// (DefaultStuckPolls when 0): a validation may fail for a moment
	// while the host's config is applied.
	StuckPolls int
}

// Defaults of AddNodesOptions.
const (
	DefaultAddNodesPoll = 5 * time.Second
	DefaultStuckPolls   = 3
)

// The approval AddNodes writes on a CSR (`oc adm certificate approve`
// writes KubectlApprove).
const (
	ApproveReason  = "NodezeroApprove"
	ApproveMessage = "This CSR was approved by nodezero wait-for add-nodes --approve."
)

// ErrAddNodesRefused: a host's node zero refused the token, or the
// cluster's API the credentials: no point waiting.
var ErrAddNodesRefused = errors.New("credentials refused")

// AddNodes follows o.Hosts until every host's Node is Ready (with o.Kube;
// else until every host is added-to-existing-cluster) and returns nil; or
// until every host is done or cannot go on, and returns an error naming
// each host that cannot and why; or until ctx ends, and returns an error
// saying what each host reached.
func AddNodes(ctx context.Context, o AddNodesOptions) error {
	m, err := NewAddNodesMonitor(o)
	if err != nil {
		return err
	}
	defer m.Close()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return m.Interrupted(ctx.Err())
		case <-timer.C:
		}
		done, err := m.Poll(ctx)
		if done || err != nil {
			if err == nil || ctx.Err() == nil {
				return err
			}
			return m.Interrupted(ctx.Err())
		}
		timer.Reset(m.poll)
	}
}

// AddNodesMonitor is AddNodes one poll at a time. It is not safe for
// concurrent use.
type AddNodesMonitor struct {
	o     AddNodesOptions
	out   io.Writer
	poll  time.Duration
	stuck int
	hosts []*addedHost
	// kubeSilent is the cluster's API's error last printed; "" while it
	// answers.
	kubeSilent string
}

// addedHost is what the monitor knows of one host.
type addedHost struct {
	AddNodesHost
	c *wire.Client

	clusterID, infraEnvID string
	tail                  *EventTail
	answered              bool   // its node zero answered once
	silent                string // the error last printed for it not answering; "" while it answers
	state                 string // status|stage|progress last printed
	status                wire.HostStatus
	stage                 wire.HostStage
	validations           map[string]string // failing validation id → message printed
	stuckPolls            int

	csrs    map[string]string // CSR name → state printed
	joined  bool              // its Node exists
	ready   bool              // its Node is Ready
	reached string            // the last milestone, for Interrupted
	failed  error             // it cannot go on
}

// rebooted: its node zero has nothing more to say; the cluster does.
func (h *addedHost) rebooted() bool {
	return h.status == wire.HostStatusAddedToExistingCluster || h.stage == wire.HostStageRebooting || h.stage == wire.HostStageDone
}

// NewAddNodesMonitor checks o and makes a client for each host's node
// zero.
func NewAddNodesMonitor(o AddNodesOptions) (*AddNodesMonitor, error) {
	if len(o.Hosts) == 0 {
		return nil, errors.New("wait-for add-nodes: no hosts to follow")
	}
	m := &AddNodesMonitor{o: o, out: o.Out, poll: o.Poll, stuck: o.StuckPolls}
	if m.out == nil {
		m.out = io.Discard
	}
	if m.poll <= 0 {
		m.poll = DefaultAddNodesPoll
	}
	if m.stuck <= 0 {
		m.stuck = DefaultStuckPolls
	}
	seen := map[string]bool{}
	for _, h := range o.Hosts {
		if h.Name == "" || seen[h.Name] {
			return nil, fmt.Errorf("wait-for add-nodes: host %q: want a name, once", h.Name)
		}
		seen[h.Name] = true
		tlsConf, err := wire.TLSConfig(h.CACert, "", false)
		if err != nil {
			return nil, fmt.Errorf("wait-for add-nodes: %s: %w", h.Name, err)
		}
		// No proxy: each host is on the machine network.
		tr := &http.Transport{Proxy: nil, DialContext: (&net.Dialer{Timeout: RequestTimeout}).DialContext, TLSClientConfig: tlsConf}
		c, err := wire.NewClient(h.URL, wire.WithUserToken(o.UserToken), wire.WithRequestTimeout(RequestTimeout), wire.WithHTTPClient(&http.Client{Transport: tr}))
		if err != nil {
			return nil, fmt.Errorf("wait-for add-nodes: %s: %w", h.Name, err)
		}
		m.hosts = append(m.hosts, &addedHost{AddNodesHost: h, c: c, validations: map[string]string{}, csrs: map[string]string{}, reached: "not seen yet"})
	}
	return m, nil
}

// Close drops the clients' idle connections.
func (m *AddNodesMonitor) Close() {
	for _, h := range m.hosts {
		h.c.CloseIdleConnections()
	}
}

func (m *AddNodesMonitor) say(h *addedHost, format string, args ...any) {
	fmt.Fprintf(m.out, "%s: %s\n", h.Name, fmt.Sprintf(format, args...))
}

// Poll asks every source once and prints what changed. done: every host
// is done or cannot go on; err then names those that cannot. An error
// without done is one no waiting fixes (credentials refused).
func (m *AddNodesMonitor) Poll(ctx context.Context) (done bool, err error) {
	var csrs []kube.CertificateSigningRequest
	var kubeOK bool
	for _, h := range m.hosts {
		if h.failed != nil || h.ready {
			continue
		}
		if !h.rebooted() || h.silent == "" {
			if err := m.pollHost(ctx, h); err != nil {
				return false, err
			}
		}
		if m.o.Kube == nil || h.failed != nil {
			continue
		}
		if !kubeOK {
			var err error
			if csrs, err = m.o.Kube.ListCSRs(ctx); err != nil {
				if r := m.kubeRefused(err); r != nil {
					return false, r
				}
				if msg := err.Error(); msg != m.kubeSilent {
					m.kubeSilent = msg
					fmt.Fprintf(m.out, "the cluster's API at %s does not answer: %v\n", m.o.Kube.Server(), err)
				}
				continue
			}
			if m.kubeSilent != "" {
				m.kubeSilent = ""
				fmt.Fprintf(m.out, "the cluster's API at %s answers\n", m.o.Kube.Server())
			}
			kubeOK = true
			slices.SortFunc(csrs, func(a, b kube.CertificateSigningRequest) int {
				if c := a.Metadata.CreationTimestamp.Compare(b.Metadata.CreationTimestamp.Time); c != 0 {
					return c
				}
				return strings.Compare(a.Metadata.Name, b.Metadata.Name)
			})
		}
		if err := m.pollCluster(ctx, h, csrs); err != nil {
			return false, err
		}
	}
	var failed []string
	var errs []error
	for _, h := range m.hosts {
		switch {
		case h.failed != nil:
			failed = append(failed, h.failed.Error())
			errs = append(errs, h.failed)
		case m.o.Kube == nil && h.status == wire.HostStatusAddedToExistingCluster:
		case !h.ready:
			return false, nil
		}
	}
	if len(failed) > 0 {
		return true, &AddNodesError{Failed: failed, errs: errs}
	}
	return true, nil
}

// AddNodesError names each host that cannot go on, with the reason.
type AddNodesError struct {
	Failed []string
	errs   []error
}

func (e *AddNodesError) Error() string {
	if len(e.Failed) == 1 {
		return "wait-for add-nodes: " + e.Failed[0]
	}
	return "wait-for add-nodes: " + fmt.Sprint(len(e.Failed)) + " hosts cannot be added:\n  " + strings.Join(e.Failed, "\n  ")
}

func (e *AddNodesError) Unwrap() []error { return e.errs }

// Interrupted is the error for a wait that ended with cause (ctx's
// error): what each host reached.
func (m *AddNodesMonitor) Interrupted(cause error) error {
	var parts []string
	for _, h := range m.hosts {
		parts = append(parts, h.Name+" "+h.reached)
	}
	return fmt.Errorf("wait-for add-nodes: %w: %s", cause, strings.Join(parts, "; "))
}

// pollHost reads the host from its own node zero: the one cluster it
// lists (the imported one), its infra-env, the host, its events.
func (m *AddNodesMonitor) pollHost(ctx context.Context, h *addedHost) error {
	host, err := m.readHost(ctx, h)
	if err != nil {
		if s := wire.StatusCode(err); s == http.StatusUnauthorized || s == http.StatusForbidden {
			return fmt.Errorf("wait-for add-nodes: %s: its node zero at %s refused the user token: %w (%w)", h.Name, h.URL, ErrAddNodesRefused, err)
		}
		if wire.StatusCode(err) == http.StatusNotFound {
			h.clusterID, h.infraEnvID, h.tail = "", "", nil // a fresh database: find them again
		}
		if wire.StatusCode(err) != 0 && !h.answered {
			// It answers, but not as a node zero should.
			m.silentOnce(h, err)
			return nil
		}
		if h.rebooted() {
			if h.silent == "" {
				h.silent = err.Error()
				m.say(h, "its node zero no longer answers (the host rebooted): following it in the cluster")
			}
			return nil
		}
		m.silentOnce(h, err)
		return nil
	}
	if h.silent != "" {
		h.silent = ""
		m.say(h, "its node zero answers at %s", h.URL)
	}
	h.answered = true
	if host == nil {
		if h.reached == "not seen yet" {
			h.reached = "its node zero up, the host not registered"
		}
		return nil
	}
	m.reportHost(h, host)
	m.reportEvents(ctx, h)
	return nil
}

func (m *AddNodesMonitor) silentOnce(h *addedHost, err error) {
	msg := err.Error()
	if h.silent == msg {
		return
	}
	h.silent = msg
	m.say(h, "its node zero at %s does not answer: %v", h.URL, err)
}

// readHost finds the cluster, its infra-env and the host; nil while the
// host has not registered.
func (m *AddNodesMonitor) readHost(ctx context.Context, h *addedHost) (*wire.Host, error) {
	if h.clusterID == "" {
		cs, err := h.c.ListClusters(ctx)
		if err != nil {
			return nil, err
		}
		if len(cs) == 0 {
			return nil, nil
		}
		h.clusterID = cs[0].ID
	}
	if h.infraEnvID == "" {
		ies, err := h.c.ListInfraEnvs(ctx, h.clusterID)
		if err != nil {
			return nil, err
		}
		if len(ies) == 0 {
			return nil, nil
		}
		h.infraEnvID = ies[0].ID
		h.tail = &EventTail{Query: wire.EventsQuery{ClusterID: h.clusterID, Severities: []wire.EventSeverity{wire.EventSeverityWarning, wire.EventSeverityError, wire.EventSeverityCritical}}}
	}
	hosts, err := h.c.ListHosts(ctx, h.infraEnvID)
	if err != nil {
		return nil, err
	}
	var only *wire.Host
	for _, x := range hosts {
		if x == nil {
			continue
		}
		if waitHostName(x) == h.Name {
			return x, nil
		}
		only = x
	}
	if len(hosts) == 1 {
		return only, nil // its node zero knows one host: itself, named otherwise so far
	}
	return nil, nil
}

// reportHost prints the host's status, stage and failing validations
// when they change, and judges whether it can go on.
func (m *AddNodesMonitor) reportHost(h *addedHost, x *wire.Host) {
	h.status = x.Status
	line := string(x.Status)
	if p := x.Progress; p != nil && p.CurrentStage != "" {
		h.stage = p.CurrentStage
		line += ": " + string(p.CurrentStage)
		if p.ProgressInfo != "" {
			line += " " + p.ProgressInfo
		}
	}
	switch x.Status {
	case wire.HostStatusError, wire.HostStatusCancelled, wire.HostStatusInstallingPendingUserAction:
		if x.StatusInfo != "" {
			line += " (" + x.StatusInfo + ")"
		}
	}
	if line != h.state {
		h.state = line
		h.reached = line
		m.say(h, "%s", line)
	}

	var hardware []wire.Validation
	vi, err := wire.ParseValidationsInfo(x.ValidationsInfo)
	if err == nil {
		failing := map[string]bool{}
		for _, v := range vi {
			if !v.Status.Failing() {
				continue
			}
			failing[v.ID] = true
			if h.validations[v.ID] != v.Message {
				h.validations[v.ID] = v.Message
				m.say(h, "validation %s failed: %s", v.ID, v.Message)
			}
			if v.Category == wire.CategoryHardware && !selfFixing(v.ID) {
				hardware = append(hardware, v)
			}
		}
		for id := range h.validations {
			if !failing[id] {
				delete(h.validations, id)
				m.say(h, "validation %s passes now", id)
			}
		}
	}

	switch x.Status {
	case wire.HostStatusError, wire.HostStatusCancelled:
		info := x.StatusInfo
		if info == "" {
			info = "no reason given"
		}
		h.failed = fmt.Errorf("%s: %s: %s", h.Name, x.Status, info)
	case wire.HostStatusInsufficient:
		if len(hardware) == 0 {
			h.stuckPolls = 0
			break
		}
		if h.stuckPolls++; h.stuckPolls >= m.stuck {
			var msgs []string
			for _, v := range hardware {
				msgs = append(msgs, v.Message+" (validation "+v.ID+")")
			}
			h.failed = fmt.Errorf("%s: insufficient, and it will not fix itself: %s", h.Name, strings.Join(msgs, "; "))
		}
	default:
		h.stuckPolls = 0
	}
	if h.failed != nil {
		m.say(h, "cannot be added: %s", strings.TrimPrefix(h.failed.Error(), h.Name+": "))
	}
}

// selfFixing are hardware validations that fail only until the host's
// inventory arrives.
func selfFixing(id string) bool {
	return slices.Contains([]string{
		string(wire.HostValidationIDHasInventory),
		string(wire.HostValidationIDInventoryNotPartiallyTruncated),
		string(wire.HostValidationIDInventoryNotFullyTruncated),
	}, id)
}

// reportEvents prints the warnings and errors the host's node zero
// recorded since the last poll.
func (m *AddNodesMonitor) reportEvents(ctx context.Context, h *addedHost) {
	if h.tail == nil {
		return
	}
	evs, err := h.tail.Next(ctx, h.c)
	if err != nil {
		return // read again at the next poll
	}
	for _, e := range evs {
		if e != nil {
			m.say(h, "%s: %s", e.Severity, e.Message)
		}
	}
}

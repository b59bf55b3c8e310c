package machine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/nodezero/nodezero/wire"
)

// ErrNoTransition means no rule of the trigger applies to the current status
// with the given facts (stateswitch's "no condition found to run
// transition"). Callers map it to 409 Conflict for user actions and ignore
// it for monitor refreshes of statuses the machine leaves alone.
var ErrNoTransition = errors.New("no transition")

// Status is the set of status types a machine runs on.
type Status interface {
	wire.HostStatus | wire.ClusterStatus
}

// HostTrigger names what asks the host machine for a transition. The values
// are assisted-service's transition type names.
type HostTrigger string

// Host triggers (internal/host/statemachine.go).
const (
	TriggerRegisterHost               HostTrigger = "RegisterHost"               // agent POSTs register
	TriggerRefreshHost                HostTrigger = "RefreshHost"                // facts changed, or the monitor's clock
	TriggerHostProgressChanged        HostTrigger = "HostProgressChanged"        // agent/controller PUTs a new stage
	TriggerInstallHost                HostTrigger = "InstallHost"                // day-2 install of a known host
	TriggerHostCancelInstallation     HostTrigger = "CancelInstallation"         // user cancels the cluster install
	TriggerResettingPendingUserAction HostTrigger = "ResettingPendingUserAction" // cluster reset
	TriggerHostInstallationFailed     HostTrigger = "HostInstallationFailed"     // install step failed
	TriggerMediaDisconnect            HostTrigger = "MediaDisconnect"            // step exit code says ISO media gone
)

// ClusterTrigger names what asks the cluster machine for a transition. The
// values are assisted-service's transition type names.
type ClusterTrigger string

// Cluster triggers (internal/cluster/statemachine.go).
const (
	TriggerRefreshStatus             ClusterTrigger = "RefreshStatus"          // a host or the cluster changed, or the clock
	TriggerPrepareForInstallation    ClusterTrigger = "PrepareForInstallation" // user POSTs actions/install
	TriggerClusterCancelInstallation ClusterTrigger = "CancelInstallation"     // user POSTs actions/cancel
	TriggerResetCluster              ClusterTrigger = "ResetCluster"           // user POSTs actions/reset
)

// Rule is one transition rule. Rules live in ordered slices: for a trigger,
// the first rule whose From holds the current status and whose Cond holds
// wins.
type Rule[S Status, T ~string, F any] struct {
	Name    string
	Trigger T
	From    []S // the empty status stands for "no row yet" (first registration)
	To      S   // the empty status means stay in the current status
	Cond    Condition[F]
	// Info renders status_info; nil leaves the stored status_info as it is
	// (assisted rules without a post-transition write nothing).
	Info func(F) string
	Doc  string
}

// HostRule is a rule of the host machine.
type HostRule = Rule[wire.HostStatus, HostTrigger, HostFacts]

// ClusterRule is a rule of the cluster machine.
type ClusterRule = Rule[wire.ClusterStatus, ClusterTrigger, ClusterFacts]

// Transition is the outcome of a trigger: which rule fired, the destination
// and the status_info to store.
type Transition[S Status] struct {
	Rule string
	From S
	To   S
	// StatusInfo is the text to store; "" means leave status_info unchanged.
	StatusInfo string
	// Changed reports a status change. The writer also stores StatusInfo
	// when it differs from the stored one, as assisted does.
	Changed bool
}

// NextHost returns the host transition for trigger t from status from. The
// empty status stands for a host not yet stored (first registration).
func NextHost(from wire.HostStatus, t HostTrigger, f HostFacts) (Transition[wire.HostStatus], error) {
	tr, err := next(hostRules, from, t, f)
	if err != nil {
		return tr, fmt.Errorf("host: %w", err)
	}
	tr.StatusInfo = truncateInfo(tr.StatusInfo)
	return tr, nil
}

// NextCluster returns the cluster transition for trigger t from status from.
func NextCluster(from wire.ClusterStatus, t ClusterTrigger, f ClusterFacts) (Transition[wire.ClusterStatus], error) {
	tr, err := next(clusterRules, from, t, f)
	if err != nil {
		return tr, fmt.Errorf("cluster: %w", err)
	}
	return tr, nil
}

// HostRules returns the host machine's rules in evaluation order.
func HostRules() []HostRule { return slices.Clone(hostRules) }

// ClusterRules returns the cluster machine's rules in evaluation order.
func ClusterRules() []ClusterRule { return slices.Clone(clusterRules) }

func next[S Status, T ~string, F any](rules []Rule[S, T, F], from S, t T, f F) (Transition[S], error) {
	for _, r := range rules {
		if r.Trigger != t || !slices.Contains(r.From, from) || !r.Cond.Eval(f) {
			continue
		}
		to := r.To
		if to == "" {
			to = from
		}
		tr := Transition[S]{Rule: r.Name, From: from, To: to, Changed: to != from}
		if r.Info != nil {
			tr.StatusInfo = r.Info(f)
		}
		return tr, nil
	}
	return Transition[S]{}, fmt.Errorf("%s from %q: %w", t, from, ErrNoTransition)
}

// statusInfoMaxLength is assisted's cap on a host's status_info
// (hostutil.StatusInfoMaxLength, for a varchar(2048) column).
const statusInfoMaxLength = 2040

func truncateInfo(s string) string {
	if len(s) > statusInfoMaxLength {
		return s[:statusInfoMaxLength]
	}
	return s
}

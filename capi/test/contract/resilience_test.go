package contract

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/wire"
)

// singleNode is the scenario's control plane with one replica and no
// VIPs.
func (s *scenario) singleNode() *cpv1.NodezeroControlPlane {
	cp := s.controlPlane(1)
	cp.Spec.Cluster.APIVIPs, cp.Spec.Cluster.IngressVIPs = nil, nil
	return cp
}

// dataReady waits until every Machine matching opts has its bootstrap
// data and returns them.
func (s *scenario) dataReady(what string, n int, opts ...client.ListOption) []clusterv1.Machine {
	s.t.Helper()
	var ms []clusterv1.Machine
	s.poll(what, long, func() (bool, string) {
		ms = s.machines(opts...)
		if len(ms) != n {
			return false, fmt.Sprintf("%d Machines, want %d", len(ms), n)
		}
		for _, m := range ms {
			if m.Spec.Bootstrap.DataSecretName == nil {
				return false, fmt.Sprintf("Machine %s has no data yet", m.Name)
			}
		}
		return true, ""
	})
	return ms
}

// TestSecondHostRefused: one host holds a Machine; a second host that
// registers into the Machine's infra-env is deregistered from the service
// and shown on the config as HostBound False, reason SecondHost, naming
// it; the first stays bound.
func TestSecondHostRefused(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	s.cluster(s.singleNode(), unusedEndpoint())
	m := s.dataReady("single-node Machine with bootstrap data", 1, controlPlaneMachines())[0]
	cfg, err := s.config(&m)
	if err != nil {
		t.Fatal(err)
	}
	ie := cfg.Status.InfraEnvID
	agent := s.svc.AgentClient()
	first, second := newUUID(t), newUUID(t)
	if _, err := agent.RegisterHost(s.ctx, ie, wire.HostCreateParams{HostID: first}); err != nil {
		t.Fatal(err)
	}
	s.poll("first host bound", short, func() (bool, string) {
		cfg, err = s.config(&m)
		if err != nil {
			return false, err.Error()
		}
		return cfg.Status.HostID == first && isTrue(cfg.Status.Conditions, bootstrapv1.HostBoundCondition),
			fmt.Sprintf("hostID %q, %s", cfg.Status.HostID, condition(cfg.Status.Conditions, bootstrapv1.HostBoundCondition))
	})
	if _, err := agent.RegisterHost(s.ctx, ie, wire.HostCreateParams{HostID: second}); err != nil {
		t.Fatal(err)
	}
	s.poll("second host refused: deregistered, SecondHost naming it", short, func() (bool, string) {
		cfg, err = s.config(&m)
		if err != nil {
			return false, err.Error()
		}
		c := findCondition(cfg.Status.Conditions, bootstrapv1.HostBoundCondition)
		_, gerr := s.svc.Client().GetHost(s.ctx, ie, second)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == bootstrapv1.SecondHostReason && strings.Contains(c.Message, second) &&
				wire.IsStatus(gerr, 404),
			fmt.Sprintf("%s; second host in the service: %v", condition(cfg.Status.Conditions, bootstrapv1.HostBoundCondition), gerr)
	})
	if cfg.Status.HostID != first {
		t.Errorf("config %s: hostID %q after the second host, want the first %s", cfg.Name, cfg.Status.HostID, first)
	}
	if _, err := s.svc.Client().GetHost(s.ctx, ie, first); err != nil {
		t.Errorf("the first host %s: %v; want it kept", first, err)
	}
}

// TestPausedCluster: once its Cluster is paused, the control plane and
// the config of a Machine report Paused; unpaused, Paused is False again
// on both. (That nothing happens while paused is not asserted: proving an
// absence would take a wait.)
func TestPausedCluster(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	s.cluster(s.singleNode(), unusedEndpoint())
	m := s.dataReady("single-node Machine with bootstrap data", 1, controlPlaneMachines())[0]
	setPaused := func(p bool) {
		t.Helper()
		cl := &clusterv1.Cluster{}
		if err := s.get(cl, clusterName); err != nil {
			t.Fatal(err)
		}
		orig := cl.DeepCopy()
		cl.Spec.Paused = &p
		if err := s.c.Patch(s.ctx, cl, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	pausedIs := func(want metav1.ConditionStatus) func() (bool, string) {
		return func() (bool, string) {
			cp := s.cp()
			cfg, err := s.config(&m)
			if err != nil {
				return false, err.Error()
			}
			a, b := findCondition(cp.Status.Conditions, clusterv1.PausedCondition), findCondition(cfg.Status.Conditions, clusterv1.PausedCondition)
			return a != nil && a.Status == want && b != nil && b.Status == want,
				fmt.Sprintf("control plane %s; config %s", condition(cp.Status.Conditions, clusterv1.PausedCondition), condition(cfg.Status.Conditions, clusterv1.PausedCondition))
		}
	}
	setPaused(true)
	s.poll("Cluster paused: control plane and config Paused", short, pausedIs(metav1.ConditionTrue))
	setPaused(false)
	s.poll("Cluster unpaused: Paused False again", short, pausedIs(metav1.ConditionFalse))
}

// TestLostStatusAndServiceRestart: the providers are idempotent. The
// service killed with SIGKILL and restarted, the control plane's
// status.clusterID and a config's status.infraEnvID wiped: the same v2
// cluster and infra-env are found again (by tag, by name), no second one
// is made, and the data secrets are the same objects with the same
// bytes.
func TestLostStatusAndServiceRestart(t *testing.T) {
	t.Parallel()
	s := newScenario(t)
	s.cluster(s.controlPlane(3), unusedEndpoint())
	ms := s.dataReady("three control-plane Machines with bootstrap data", 3, controlPlaneMachines())
	cp := s.cp()
	clusterID := cp.Status.ClusterID
	type data struct {
		uid, infraEnv string
		value         []byte
	}
	before := map[string]data{}
	for _, m := range ms {
		cfg, err := s.config(&m)
		if err != nil {
			t.Fatal(err)
		}
		sec := &corev1.Secret{}
		if err := s.get(sec, cfg.Status.DataSecretName); err != nil {
			t.Fatal(err)
		}
		before[m.Name] = data{string(sec.UID), cfg.Status.InfraEnvID, sec.Data["value"]}
	}

	s.svc.Kill()
	s.svc.Restart()
	wipe := func(o client.Object, mutate func()) {
		t.Helper()
		orig := o.DeepCopyObject().(client.Object)
		mutate()
		if err := s.c.Status().Patch(s.ctx, o, client.MergeFrom(orig)); err != nil {
			t.Fatal(err)
		}
	}
	wipe(cp, func() { cp.Status.ClusterID = "" })
	m0 := ms[0]
	cfg0, err := s.config(&m0)
	if err != nil {
		t.Fatal(err)
	}
	wipe(cfg0, func() { cfg0.Status.InfraEnvID = "" })

	s.poll("status found again after the restart: the same v2 cluster and infra-env", long, func() (bool, string) {
		cp = s.cp()
		cfg, err := s.config(&m0)
		if err != nil {
			return false, err.Error()
		}
		return cp.Status.ClusterID != "" && cfg.Status.InfraEnvID != "",
			fmt.Sprintf("clusterID %q, infraEnvID %q", cp.Status.ClusterID, cfg.Status.InfraEnvID)
	})
	if cp.Status.ClusterID != clusterID {
		t.Errorf("status.clusterID %s after the loss, want the same v2 cluster %s", cp.Status.ClusterID, clusterID)
	}
	list, err := s.svc.Client().ListClusters(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	ies, err := s.svc.Client().ListInfraEnvs(s.ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || len(ies) != 3 {
		t.Errorf("the service holds %d clusters and %d infra-envs, want 1 and 3 (nothing made twice)", len(list), len(ies))
	}
	for _, m := range s.machines(controlPlaneMachines()) {
		cfg, err := s.config(&m)
		if err != nil {
			t.Fatal(err)
		}
		sec := &corev1.Secret{}
		if err := s.get(sec, cfg.Status.DataSecretName); err != nil {
			t.Fatal(err)
		}
		b, ok := before[m.Name]
		switch {
		case !ok:
			t.Errorf("Machine %s is new after the restart: a Machine was made twice", m.Name)
		case cfg.Status.InfraEnvID != b.infraEnv:
			t.Errorf("Machine %s: infra-env %s after the loss, was %s", m.Name, cfg.Status.InfraEnvID, b.infraEnv)
		case string(sec.UID) != b.uid || string(sec.Data["value"]) != string(b.value):
			t.Errorf("Machine %s: data secret replaced or changed (uid %s, was %s; %d bytes, were %d)", m.Name, sec.UID, b.uid, len(sec.Data["value"]), len(b.value))
		}
	}
}

package bootstrap

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	bootstrapv1 "github.com/nodezero/nodezero/capi/api/bootstrap/v1alpha1"
	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// condition returns the config's condition of that type.
func condition(t *testing.T, cfg *bootstrapv1.NodezeroConfig, typ string) metav1.Condition {
	t.Helper()
	c := meta.FindStatusCondition(cfg.Status.Conditions, typ)
	if c == nil {
		t.Fatalf("no %s condition in %+v", typ, cfg.Status.Conditions)
	}
	return *c
}

// TestDataSecretShape: the contract's data secret (name, type, label,
// controller reference, value, format) holds a config image that makes
// the host an agent of the service in the Machine's own infra-env, which
// is bound to the control plane's v2 cluster; the status says so.
func TestDataSecretShape(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		cp   bool
	}{{"c1-cp-0", true}, {"c1-worker-0", false}} {
		t.Run(tc.name, func(t *testing.T) {
			e.machine(tc.name, tc.cp, bootstrapv1.NodezeroConfigSpec{})
			res, cfg := e.mustReconcile(tc.name)
			if res.RequeueAfter == 0 {
				t.Error("no requeue while no host is bound")
			}
			sec := e.secret(tc.name)
			if sec == nil {
				t.Fatal("no data secret")
			}
			if sec.Type != clusterv1.ClusterSecretType || sec.Labels[clusterv1.ClusterNameLabel] != clusterName {
				t.Errorf("secret type %q labels %v", sec.Type, sec.Labels)
			}
			owner := metav1.GetControllerOf(sec)
			if owner == nil || owner.Kind != "NodezeroConfig" || owner.Name != tc.name || owner.UID != cfg.UID || owner.APIVersion != bootstrapv1.GroupVersion.String() {
				t.Errorf("secret controller %+v, want the config", owner)
			}
			if string(sec.Data[DataSecretFormatKey]) != bootstrapv1.DataSecretFormatConfigImage {
				t.Errorf("format %q", sec.Data[DataSecretFormatKey])
			}
			v := sec.Data[DataSecretValueKey]
			ms, err := configimage.Read(bytes.NewReader(v), int64(len(v)), configimage.Limits{})
			if err != nil {
				t.Fatalf("value is no config image: %v", err)
			}
			last := ms[len(ms)-1]
			rv, err := onhost.ParseRendezvous(last.Path, last.Data)
			if err != nil {
				t.Fatal(err)
			}
			if rv.InfraEnvID == "" || rv.InfraEnvID != cfg.Status.InfraEnvID || rv.AgentToken != e.svc.AgentToken || rv.ServiceBaseURL != e.svc.URL || rv.UserToken != "" {
				t.Errorf("rendezvous-host.env %+v, want the service, its agent token only and infra-env %s", rv, cfg.Status.InfraEnvID)
			}
			for _, m := range ms {
				if m.Path == onhost.MachineBindingPath {
					b, err := onhost.ParseMachineBinding(m.Path, m.Data)
					if err != nil || b != (onhost.MachineBinding{Namespace: ns, Name: tc.name, UID: "machine-uid-" + tc.name, Cluster: clusterName}) {
						t.Errorf("machine binding %+v, %v", b, err)
					}
				}
			}
			ies := e.infraEnvsNamed(ns + "-" + tc.name)
			if len(ies) != 1 || ies[0].ID != cfg.Status.InfraEnvID || ies[0].ClusterID != e.clusterID {
				t.Errorf("infra-envs %+v, want one bound to v2 cluster %s", ies, e.clusterID)
			}
			if cfg.Status.DataSecretName != tc.name || cfg.Status.Initialization.DataSecretCreated == nil || !*cfg.Status.Initialization.DataSecretCreated {
				t.Errorf("status %+v", cfg.Status)
			}
			for _, typ := range []string{bootstrapv1.ReadyCondition, bootstrapv1.DataSecretAvailableCondition} {
				if c := condition(t, cfg, typ); c.Status != metav1.ConditionTrue || c.Reason != bootstrapv1.DataSecretCreatedReason {
					t.Errorf("%s = %+v", typ, c)
				}
			}
			if c := condition(t, cfg, bootstrapv1.HostBoundCondition); c.Status != metav1.ConditionFalse || c.Reason != bootstrapv1.WaitingForHostReason {
				t.Errorf("HostBound = %+v", c)
			}
			if c := condition(t, cfg, clusterv1.PausedCondition); c.Status != metav1.ConditionFalse {
				t.Errorf("Paused = %+v", c)
			}
			if !containsString(cfg.Finalizers, bootstrapv1.Finalizer) {
				t.Errorf("finalizers %v", cfg.Finalizers)
			}
		})
	}
}

// TestIgnitionFormat: spec.format Ignition gives an Ignition config in
// value and format ignition.
func TestIgnitionFormat(t *testing.T) {
	e := newEnv(t)
	e.machine("w-ign", false, bootstrapv1.NodezeroConfigSpec{Format: bootstrapv1.FormatIgnition})
	e.mustReconcile("w-ign")
	sec := e.secret("w-ign")
	if sec == nil || string(sec.Data[DataSecretFormatKey]) != DataSecretFormatIgnition {
		t.Fatalf("secret %+v", sec)
	}
	var ign struct {
		Ignition struct{ Version string } `json:"ignition"`
		Storage  struct{ Files []struct{ Path string } }
	}
	if err := json.Unmarshal(sec.Data[DataSecretValueKey], &ign); err != nil || !strings.HasPrefix(ign.Ignition.Version, "3.") {
		t.Fatalf("value %q: %v", sec.Data[DataSecretValueKey], err)
	}
	if n := len(ign.Storage.Files); n == 0 || ign.Storage.Files[n-1].Path != onhost.RendezvousEnvPath {
		t.Errorf("files %+v", ign.Storage.Files)
	}
}

// TestIdempotent: many reconciles make one infra-env and one secret whose
// bytes never change; a deleted secret and a lost status are made again
// to the same infra-env and the same bytes.
func TestIdempotent(t *testing.T) {
	e := newEnv(t)
	e.machine("w0", false, bootstrapv1.NodezeroConfigSpec{
		Interfaces:           []bootstrapv1.Interface{{Name: "enp1s0", MACAddress: "52:54:00:00:01:01"}},
		NetworkConfig:        "interfaces:\n- name: enp1s0\n  type: ethernet\n  state: up\n  ipv4:\n    enabled: true\n    dhcp: true\n",
		RootDeviceHints:      &bootstrapv1.RootDeviceHints{DeviceName: "/dev/vda"},
		AdditionalNTPSources: []string{"ntp.example.com"},
	})
	start := time.Now()
	_, first := e.mustReconcile("w0")
	made := time.Since(start)
	value := e.secret("w0").Data[DataSecretValueKey]
	start = time.Now()
	for range 5 {
		_, cfg := e.mustReconcile("w0")
		if cfg.Status.InfraEnvID != first.Status.InfraEnvID {
			t.Fatalf("infra-env %s, then %s", first.Status.InfraEnvID, cfg.Status.InfraEnvID)
		}
		if !bytes.Equal(e.secret("w0").Data[DataSecretValueKey], value) {
			t.Fatal("the data secret's value changed")
		}
	}
	// Figures for the report, not asserted: the first reconcile makes the
	// infra-env and the image; the next ones find them and re-make the
	// image to compare.
	t.Logf("reconcile: first (infra-env + %d-byte image + secret) %v, steady %v", len(value), made, time.Since(start)/5)
	if n := len(e.infraEnvsNamed(ns + "-w0")); n != 1 {
		t.Errorf("%d infra-envs, want 1", n)
	}

	if err := e.c.Delete(e.ctx, e.secret("w0")); err != nil {
		t.Fatal(err)
	}
	e.mustReconcile("w0")
	if sec := e.secret("w0"); sec == nil || !bytes.Equal(sec.Data[DataSecretValueKey], value) {
		t.Error("the re-made data secret differs")
	}

	// A lost status (a restore from backup, a status wipe): the infra-env is
	// found again by name.
	cfg := &bootstrapv1.NodezeroConfig{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, cfg); err != nil {
		t.Fatal(err)
	}
	cfg.Status = bootstrapv1.NodezeroConfigStatus{}
	if err := e.c.Status().Update(e.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	_, cfg = e.mustReconcile("w0")
	if cfg.Status.InfraEnvID != first.Status.InfraEnvID || len(e.infraEnvsNamed(ns+"-w0")) != 1 {
		t.Errorf("after a lost status: infra-env %s, %d of that name; want %s, 1", cfg.Status.InfraEnvID, len(e.infraEnvsNamed(ns+"-w0")), first.Status.InfraEnvID)
	}
	if !bytes.Equal(e.secret("w0").Data[DataSecretValueKey], value) {
		t.Error("after a lost status the data secret's value changed")
	}
}

// TestGate: for every v2 cluster status, a control-plane Machine gets its
// data bound to the day-1 cluster; a worker gets it before the install
// (day 1), waits while it runs or failed, and after it joins the day-2
// cluster once the control plane has one.
func TestGate(t *testing.T) {
	e := newEnv(t, withProxy())
	day2Name, dns, ocpID := "c1", "api.c1.example.com", "6a1b2c3d-0000-4000-8000-0123456789ab"
	day2, err := e.user.ImportCluster(e.ctx, wire.ImportClusterParams{Name: &day2Name, APIVipDnsname: &dns, OpenshiftClusterID: &ocpID, OpenshiftVersion: "4.18"})
	if err != nil {
		t.Fatal(err)
	}
	day1Statuses := []wire.ClusterStatus{wire.ClusterStatusPendingForInput, wire.ClusterStatusInsufficient, wire.ClusterStatusReady}
	waiting := []wire.ClusterStatus{wire.ClusterStatusPreparingForInstallation, wire.ClusterStatusInstalling,
		wire.ClusterStatusInstallingPendingUserAction, wire.ClusterStatusFinalizing, wire.ClusterStatusError, wire.ClusterStatusCancelled}
	installed := []wire.ClusterStatus{wire.ClusterStatusInstalled, wire.ClusterStatusAddingHosts, wire.ClusterStatusUnmonitored}
	type want struct {
		cluster string // the infra-env's cluster; "" means no data
		reason  string
	}
	n := 0
	check := func(st wire.ClusterStatus, cp bool, day2ID string, w want) {
		n++
		name := strings.ReplaceAll(string(st), "-", "") + map[bool]string{true: "-cp", false: "-w"}[cp] + map[bool]string{true: "-d2", false: ""}[day2ID != ""]
		t.Run(name, func(t *testing.T) {
			e.proxy.set(st)
			cpObj := e.controlPlane()
			cpObj.Status.Day2ClusterID = day2ID
			if err := e.c.Status().Update(e.ctx, cpObj); err != nil {
				t.Fatal(err)
			}
			e.machine(name, cp, bootstrapv1.NodezeroConfigSpec{})
			res, cfg := e.mustReconcile(name)
			sec := e.secret(name)
			if w.cluster == "" {
				if sec != nil || cfg.Status.InfraEnvID != "" {
					t.Fatalf("v2 cluster %s: data secret %v, infra-env %q; want none", st, sec != nil, cfg.Status.InfraEnvID)
				}
				if c := condition(t, cfg, bootstrapv1.DataSecretAvailableCondition); c.Status != metav1.ConditionFalse || c.Reason != w.reason {
					t.Errorf("DataSecretAvailable = %+v, want False %s", c, w.reason)
				}
				if c := condition(t, cfg, bootstrapv1.ReadyCondition); c.Reason != w.reason {
					t.Errorf("Ready = %+v, want %s", c, w.reason)
				}
				if res.RequeueAfter == 0 {
					t.Error("no requeue while waiting")
				}
				return
			}
			if sec == nil {
				t.Fatalf("v2 cluster %s: no data secret (conditions %+v)", st, cfg.Status.Conditions)
			}
			ie, err := e.user.GetInfraEnv(e.ctx, cfg.Status.InfraEnvID)
			if err != nil || ie.ClusterID != w.cluster {
				t.Errorf("infra-env %+v (%v), want bound to %s", ie, err, w.cluster)
			}
		})
	}
	for _, st := range append(append(append([]wire.ClusterStatus{}, day1Statuses...), waiting...), installed...) {
		check(st, true, "", want{cluster: e.clusterID})
	}
	for _, st := range day1Statuses {
		check(st, false, "", want{cluster: e.clusterID})
	}
	for _, st := range waiting {
		check(st, false, "", want{reason: bootstrapv1.WaitingForInstallCompleteReason})
	}
	for _, st := range installed {
		check(st, false, "", want{reason: bootstrapv1.WaitingForControlPlaneReason})
		check(st, false, day2.ID, want{cluster: day2.ID})
	}
	if n != 27 { // 12 statuses for a control-plane Machine, 15 worker cases
		t.Errorf("%d cases: the table lost rows", n)
	}

	// A worker held back gets its data, day 2, once the install is over.
	e.proxy.set(wire.ClusterStatusInstalling)
	cpObj := e.controlPlane()
	cpObj.Status.Day2ClusterID = ""
	if err := e.c.Status().Update(e.ctx, cpObj); err != nil {
		t.Fatal(err)
	}
	e.machine("late", false, bootstrapv1.NodezeroConfigSpec{})
	if _, cfg := e.mustReconcile("late"); e.secret("late") != nil || condition(t, cfg, bootstrapv1.DataSecretAvailableCondition).Reason != bootstrapv1.WaitingForInstallCompleteReason {
		t.Fatal("a worker got data mid-install")
	}
	e.proxy.set(wire.ClusterStatusInstalled)
	cpObj = e.controlPlane()
	cpObj.Status.Day2ClusterID = day2.ID
	if err := e.c.Status().Update(e.ctx, cpObj); err != nil {
		t.Fatal(err)
	}
	_, cfg := e.mustReconcile("late")
	if e.secret("late") == nil || condition(t, cfg, bootstrapv1.ReadyCondition).Status != metav1.ConditionTrue {
		t.Fatalf("after the install: conditions %+v", cfg.Status.Conditions)
	}
	if ie, err := e.user.GetInfraEnv(e.ctx, cfg.Status.InfraEnvID); err != nil || ie.ClusterID != day2.ID {
		t.Errorf("late worker's infra-env %+v (%v), want the day-2 cluster %s", ie, err, day2.ID)
	}
}

// TestGateFunction: the pure gate for every status the wire package
// names.
func TestGateFunction(t *testing.T) {
	for _, tc := range []struct {
		status      wire.ClusterStatus
		cp          bool
		day2        string
		wantCluster string
		wantReason  string
	}{
		{"", false, "", "d1", ""},
		{wire.ClusterStatusReady, false, "d2", "d1", ""},
		{wire.ClusterStatusInstalling, false, "d2", "", bootstrapv1.WaitingForInstallCompleteReason},
		{wire.ClusterStatusInstalling, true, "", "d1", ""},
		{wire.ClusterStatusFinalizing, false, "", "", bootstrapv1.WaitingForInstallCompleteReason},
		{wire.ClusterStatusInstalled, false, "", "", bootstrapv1.WaitingForControlPlaneReason},
		{wire.ClusterStatusInstalled, false, "d2", "d2", ""},
		{wire.ClusterStatusAddingHosts, false, "d2", "d2", ""},
	} {
		gotCluster, gotReason := gate(tc.cp, tc.status, "d1", tc.day2)
		if gotCluster != tc.wantCluster || gotReason != tc.wantReason {
			t.Errorf("gate(cp=%v, %q, day2 %q) = %q, %q; want %q, %q", tc.cp, tc.status, tc.day2, gotCluster, gotReason, tc.wantCluster, tc.wantReason)
		}
	}
}

// TestWaits: before the Cluster's infrastructure is provisioned, or
// before the control plane has a v2 cluster, no infra-env or secret is
// made and the reason is shown; a paused Cluster changes nothing.
func TestWaits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opt    envOption
		reason string
		status metav1.ConditionStatus
		typ    string
	}{
		{"infrastructure", func(c *envConfig) { c.unprovision = true }, bootstrapv1.WaitingForClusterInfrastructureReason, metav1.ConditionFalse, bootstrapv1.DataSecretAvailableCondition},
		{"control plane", func(c *envConfig) { c.noClusterID = true }, bootstrapv1.WaitingForControlPlaneReason, metav1.ConditionFalse, bootstrapv1.DataSecretAvailableCondition},
		{"paused", func(c *envConfig) { c.paused = true }, clusterv1.PausedReason, metav1.ConditionTrue, clusterv1.PausedCondition},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.opt)
			e.machine("w0", false, bootstrapv1.NodezeroConfigSpec{})
			_, cfg := e.mustReconcile("w0")
			if e.secret("w0") != nil || cfg.Status.InfraEnvID != "" || len(e.infraEnvsNamed(ns+"-w0")) != 0 {
				t.Error("made the data or the infra-env")
			}
			if c := condition(t, cfg, tc.typ); c.Status != tc.status || c.Reason != tc.reason {
				t.Errorf("%s = %+v, want %s %s", tc.typ, c, tc.status, tc.reason)
			}
		})
	}
	t.Run("paused annotation", func(t *testing.T) {
		e := newEnv(t)
		cfg := e.machine("w0", false, bootstrapv1.NodezeroConfigSpec{})
		cfg.Annotations = map[string]string{clusterv1.PausedAnnotation: ""}
		if err := e.c.Update(e.ctx, cfg); err != nil {
			t.Fatal(err)
		}
		_, cfg = e.mustReconcile("w0")
		if e.secret("w0") != nil || condition(t, cfg, clusterv1.PausedCondition).Status != metav1.ConditionTrue || len(cfg.Finalizers) != 0 {
			t.Errorf("paused config: secret %v, conditions %+v, finalizers %v", e.secret("w0") != nil, cfg.Status.Conditions, cfg.Finalizers)
		}
	})
}

// TestVanishedMachine: a config whose Machine does not exist, or was
// deleted after its data was made, is left alone: no error, nothing made.
func TestVanishedMachine(t *testing.T) {
	e := newEnv(t)
	e.config("orphan", bootstrapv1.NodezeroConfigSpec{})
	res, cfg, err := e.reconcile("orphan")
	if err != nil || res.RequeueAfter != 0 {
		t.Errorf("reconcile = %+v, %v; want nothing to do", res, err)
	}
	if e.secret("orphan") != nil || len(e.infraEnvsNamed(ns+"-orphan")) != 0 || len(cfg.Finalizers) != 0 {
		t.Error("a config without its Machine got data, an infra-env or a finalizer")
	}

	e.machine("w0", false, bootstrapv1.NodezeroConfigSpec{})
	_, before := e.mustReconcile("w0")
	m := &clusterv1.Machine{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: "w0"}, m); err != nil {
		t.Fatal(err)
	}
	if err := e.c.Delete(e.ctx, m); err != nil {
		t.Fatal(err)
	}
	res, after, err := e.reconcile("w0")
	if err != nil || res.RequeueAfter != 0 {
		t.Errorf("reconcile after the Machine went = %+v, %v", res, err)
	}
	if after.Status.InfraEnvID != before.Status.InfraEnvID || len(e.infraEnvsNamed(ns+"-w0")) != 1 {
		t.Error("the infra-env changed after the Machine went")
	}
}

// TestHostBinding: the first host to register is bound and given the
// Machine's role and hostname; a second one is deregistered and shown,
// and stays shown while the first holds the Machine.
func TestHostBinding(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		machine string
		cp      bool
		role    wire.HostRole
		first   string
		second  string
	}{
		{"c1-cp-0", true, wire.HostRoleMaster, "11111111-0000-4000-8000-000000000001", "11111111-0000-4000-8000-000000000002"},
		{"c1-w-0", false, wire.HostRoleWorker, "22222222-0000-4000-8000-000000000001", "22222222-0000-4000-8000-000000000002"},
	} {
		t.Run(tc.machine, func(t *testing.T) {
			e.machine(tc.machine, tc.cp, bootstrapv1.NodezeroConfigSpec{})
			_, cfg := e.mustReconcile(tc.machine)
			ie := cfg.Status.InfraEnvID
			e.registerHost(ie, tc.first)
			_, cfg = e.mustReconcile(tc.machine)
			if cfg.Status.HostID != tc.first {
				t.Fatalf("hostID %q, want %s", cfg.Status.HostID, tc.first)
			}
			if c := condition(t, cfg, bootstrapv1.HostBoundCondition); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, tc.first) {
				t.Errorf("HostBound = %+v", c)
			}
			h, err := e.user.GetHost(e.ctx, ie, tc.first)
			if err != nil {
				t.Fatal(err)
			}
			if h.Role != tc.role || h.RequestedHostname != tc.machine {
				t.Errorf("host role %q hostname %q, want %s %s", h.Role, h.RequestedHostname, tc.role, tc.machine)
			}

			e.registerHost(ie, tc.second)
			for range 2 {
				_, cfg = e.mustReconcile(tc.machine)
				if cfg.Status.HostID != tc.first {
					t.Errorf("hostID %q after a second host, want %s", cfg.Status.HostID, tc.first)
				}
				c := condition(t, cfg, bootstrapv1.HostBoundCondition)
				if c.Status != metav1.ConditionFalse || c.Reason != bootstrapv1.SecondHostReason || !strings.Contains(c.Message, tc.second) {
					t.Errorf("HostBound = %+v, want False SecondHost naming %s", c, tc.second)
				}
			}
			hosts, err := e.user.ListHosts(e.ctx, ie)
			if err != nil || len(hosts) != 1 || hosts[0].ID != tc.first {
				t.Errorf("hosts %+v (%v), want only %s", hosts, err, tc.first)
			}
		})
	}
}

// TestDelete: deleting a config deregisters its host and infra-env,
// deletes its data secret and lets it go.
func TestDelete(t *testing.T) {
	e := newEnv(t)
	e.machine("w0", false, bootstrapv1.NodezeroConfigSpec{})
	_, cfg := e.mustReconcile("w0")
	ie, host := cfg.Status.InfraEnvID, "33333333-0000-4000-8000-000000000001"
	e.registerHost(ie, host)
	e.mustReconcile("w0")
	if err := e.c.Delete(e.ctx, cfg); err != nil {
		t.Fatal(err)
	}
	_, gone, err := e.reconcile("w0")
	if err != nil {
		t.Fatal(err)
	}
	if gone != nil {
		t.Errorf("config still there, finalizers %v", gone.Finalizers)
	}
	if _, err := e.user.GetInfraEnv(e.ctx, ie); !wire.IsStatus(err, 404) {
		t.Errorf("infra-env %s: %v, want 404", ie, err)
	}
	if _, err := e.user.GetHost(e.ctx, ie, host); err == nil {
		t.Errorf("host %s is still registered", host)
	}
	if e.secret("w0") != nil {
		t.Error("data secret still there")
	}
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestServiceKilled: with the service killed (SIGKILL), a reconcile fails
// and a config without data says ServiceUnreachable; once the service is
// back on the same address, the configs carry on with the same infra-env
// and byte-identical data, and nothing is made twice.
func TestServiceKilled(t *testing.T) {
	e := newEnv(t)
	e.machine("w0", false, bootstrapv1.NodezeroConfigSpec{})
	_, before := e.mustReconcile("w0")
	value := e.secret("w0").Data[DataSecretValueKey]
	e.machine("w1", false, bootstrapv1.NodezeroConfigSpec{})

	e.svc.Kill()
	for _, name := range []string{"w0", "w1"} {
		if _, _, err := e.reconcile(name); err == nil {
			t.Errorf("%s: reconcile without the service: no error", name)
		}
	}
	cfg := &bootstrapv1.NodezeroConfig{}
	if err := e.c.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: "w1"}, cfg); err != nil {
		t.Fatal(err)
	}
	if c := condition(t, cfg, bootstrapv1.DataSecretAvailableCondition); c.Reason != bootstrapv1.ServiceUnreachableReason {
		t.Errorf("w1 DataSecretAvailable = %+v, want ServiceUnreachable", c)
	}
	if c := condition(t, before, bootstrapv1.DataSecretAvailableCondition); c.Status != metav1.ConditionTrue {
		t.Errorf("w0 lost its data: %+v", c)
	}

	e.svc.Restart()
	_, after := e.mustReconcile("w0")
	if after.Status.InfraEnvID != before.Status.InfraEnvID || !bytes.Equal(e.secret("w0").Data[DataSecretValueKey], value) {
		t.Errorf("after the restart: infra-env %s (was %s), data equal %v", after.Status.InfraEnvID, before.Status.InfraEnvID,
			bytes.Equal(e.secret("w0").Data[DataSecretValueKey], value))
	}
	_, w1 := e.mustReconcile("w1")
	if e.secret("w1") == nil || condition(t, w1, bootstrapv1.ReadyCondition).Status != metav1.ConditionTrue {
		t.Errorf("w1 after the restart: conditions %+v", w1.Status.Conditions)
	}
	for _, name := range []string{"w0", "w1"} {
		if n := len(e.infraEnvsNamed(ns + "-" + name)); n != 1 {
			t.Errorf("%d infra-envs for %s, want 1", n, name)
		}
	}
}

package assisted

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/daemon/installfiles"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/wire"
)

// The installed cluster the day-2 tests import: the node-joiner's facts.
const (
	day2OCPID   = "1b5ba46b-7e56-47b1-a326-a9eebddfb38c"
	day2APIName = "api.ostest.example.com"
	day2MCSURL  = "https://api-int.ostest.example.com:22623/config/worker"
)

// testCABase64 is a CA certificate as worker-ignition-endpoint.json
// carries it: base64 of its PEM.
func testCABase64(t testing.TB) string {
	t.Helper()
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	ca, _, _, err := pki.NewServer("root-ca", nil, []string{"api-int.ostest.example.com"}, now, now.Add(24*time.Hour))
	if err != nil {
		t.Fatalf("pki.NewServer: %v", err)
	}
	return base64.StdEncoding.EncodeToString(pki.CertPEM(ca.Cert))
}

// importCluster imports the test cluster and returns its id.
func (e *env) importCluster() string {
	e.t.Helper()
	c, err := e.s.ImportCluster(e.ctx, &wire.ImportClusterParams{
		Name: ptr("ignored"), APIVipDnsname: ptr(day2APIName), OpenshiftClusterID: ptr(day2OCPID), OpenshiftVersion: "4.18.0",
	})
	if err != nil {
		e.t.Fatalf("ImportCluster: %v", err)
	}
	return c.ID
}

// day2Env imports the test cluster, gives it the worker ignition endpoint
// of the node-joiner (with CA) as agent-import-cluster does, and binds an
// infra-env to it.
func day2Env(t *testing.T) (e *env, clusterID, infraEnvID, ca string) {
	e = newEnv(t)
	clusterID = e.importCluster()
	ca = testCABase64(t)
	if _, err := e.s.UpdateCluster(e.ctx, clusterID, &wire.V2ClusterUpdateParams{
		UserManagedNetworking: ptr(false),
		IgnitionEndpoint:      &wire.IgnitionEndpoint{URL: ptr(day2MCSURL), CACertificate: ptr(ca)},
	}); err != nil {
		t.Fatalf("UpdateCluster: %v", err)
	}
	ie, err := e.s.RegisterInfraEnv(e.ctx, &wire.InfraEnvCreateParams{Name: "ostest-day2", PullSecret: testPullSecret, ClusterID: &clusterID})
	if err != nil {
		t.Fatalf("RegisterInfraEnv: %v", err)
	}
	return e, clusterID, ie.ID, ca
}

// addDay2Host adds a worker-class host to the day-2 infra-env and answers
// its checks, the API name resolving as the installed cluster's DNS does.
func (e *env) addDay2Host(infraEnvID, name string, n int) string {
	e.t.Helper()
	id := e.addHost(infraEnvID, masterInv(e.t, name, n))
	e.postCheck(infraEnvID, id, wire.StepTypeDomainResolution, wire.DomainResolutionResponse{
		Resolutions: []*wire.DomainResolutionResponseResolutionsItem{{DomainName: day2APIName, IPv4Addresses: []string{testAPIVIP}}},
	})
	return id
}

// TestImportCluster: v2ImportCluster makes the cluster assisted makes (a new
// id, kind AddHostsCluster, adding-hosts, imported, name and domain from
// api.<name>.<domain>), lists and keeps it across a restart, and refuses
// params it cannot use with a 400 naming each field.
func TestImportCluster(t *testing.T) {
	e := newEnv(t)
	id := e.importCluster()
	type imported struct {
		Kind                                      wire.ClusterKind
		ID, Href, Name, BaseDNSDomain             string
		OpenshiftClusterID, OpenshiftVersion, API string
		Platform                                  wire.PlatformType
		Imported                                  bool
		Status                                    wire.ClusterStatus
		StatusInfo                                string
	}
	want := imported{
		Kind: wire.ClusterKindAddHostsCluster, ID: id, Href: apiBase + "/clusters/" + id,
		Name: "ostest", BaseDNSDomain: "example.com", OpenshiftClusterID: day2OCPID, OpenshiftVersion: "4.18.0",
		API: day2APIName, Platform: wire.PlatformTypeBaremetal, Imported: true,
		Status: wire.ClusterStatusAddingHosts, StatusInfo: "cluster is adding hosts to existing OCP cluster",
	}
	pick := func(c *wire.Cluster) imported {
		out := imported{
			Kind: c.Kind, ID: c.ID, Href: c.Href, Name: c.Name, BaseDNSDomain: c.BaseDNSDomain,
			OpenshiftClusterID: c.OpenshiftClusterID, OpenshiftVersion: c.OpenshiftVersion, API: deref(c.APIVIPDNSName),
			Imported: c.Imported, Status: c.Status, StatusInfo: c.StatusInfo,
		}
		if c.Platform != nil {
			out.Platform = c.Platform.Type
		}
		return out
	}
	if diff := cmp.Diff(want, pick(e.getCluster(id))); diff != "" {
		t.Errorf("imported cluster mismatch (-want +got):\n%s", diff)
	}
	if id == day2OCPID {
		t.Errorf("cluster id = the OpenShift cluster id %s, want a new one", id)
	}
	if !hasEvent(e.events(EventsQuery{ClusterID: id}), evClusterRegistered, "Successfully registered cluster") {
		t.Errorf("no %s event", evClusterRegistered)
	}
	e.reopen()
	list := e.s.ListClusters()
	if len(list) != 1 || list[0].ID != id {
		t.Fatalf("ListClusters after reopen = %d clusters, want the imported one", len(list))
	}
	if diff := cmp.Diff(want, pick(list[0])); diff != "" {
		t.Errorf("imported cluster after reopen mismatch (-want +got):\n%s", diff)
	}

	// An API name that is not api.<name>.<domain>: the name given stays.
	c, err := e.s.ImportCluster(e.ctx, &wire.ImportClusterParams{Name: ptr("edge-1"), APIVipDnsname: ptr("192.168.111.5"), OpenshiftClusterID: ptr(day2OCPID)})
	if err != nil {
		t.Fatalf("ImportCluster by address: %v", err)
	}
	if c.Name != "edge-1" || c.BaseDNSDomain != "" {
		t.Errorf("imported by address: name %q base domain %q, want edge-1 and none", c.Name, c.BaseDNSDomain)
	}

	for _, tc := range []struct {
		name string
		p    *wire.ImportClusterParams
		want []string
	}{
		{"no body", nil, []string{"missing request body"}},
		{"nothing", &wire.ImportClusterParams{}, []string{"name: required", "api_vip_dnsname: required", "openshift_cluster_id: required"}},
		{"cluster id not a uuid", &wire.ImportClusterParams{Name: ptr("a"), APIVipDnsname: ptr(day2APIName), OpenshiftClusterID: ptr("cluster-1")},
			[]string{`openshift_cluster_id: "cluster-1" is not a UUID`}},
		{"bad name", &wire.ImportClusterParams{Name: ptr("Bad_Name"), APIVipDnsname: ptr("10.0.0.1"), OpenshiftClusterID: ptr(day2OCPID)},
			[]string{`name: cluster name format is not valid: "Bad_Name"`}},
		{"bad name from the api name", &wire.ImportClusterParams{Name: ptr("ok"), APIVipDnsname: ptr("api.-x-.example.com"), OpenshiftClusterID: ptr(day2OCPID)},
			[]string{"api_vip_dnsname:", `name: cluster name format is not valid: "-x-"`}},
		{"empty name, no api form", &wire.ImportClusterParams{Name: ptr(""), APIVipDnsname: ptr("10.0.0.1"), OpenshiftClusterID: ptr(day2OCPID)},
			[]string{`name: cluster name format is not valid: ""`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.ImportCluster(e.ctx, tc.p)
			wantKind(t, "ImportCluster", err, KindBadRequest)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if n := len(e.s.ListClusters()); n != 2 {
		t.Errorf("%d clusters after the refused imports, want 2", n)
	}
}

// TestUpdateImportedCluster: the PATCH agent-import-cluster sends sets
// user_managed_networking and the ignition endpoint; a URL that is not an
// absolute http(s) URL or a CA that is not base64 PEM is a 400; a patch of
// the URL alone keeps the CA.
func TestUpdateImportedCluster(t *testing.T) {
	e, id, _, ca := day2Env(t)
	c := e.getCluster(id)
	if c.IgnitionEndpoint == nil || deref(c.IgnitionEndpoint.URL) != day2MCSURL || deref(c.IgnitionEndpoint.CACertificate) != ca {
		t.Fatalf("ignition_endpoint = %+v, want the URL and CA set", c.IgnitionEndpoint)
	}
	if c.UserManagedNetworking == nil || *c.UserManagedNetworking {
		t.Errorf("user_managed_networking = %v, want false", c.UserManagedNetworking)
	}
	if _, err := e.s.UpdateCluster(e.ctx, id, &wire.V2ClusterUpdateParams{UserManagedNetworking: ptr(true)}); err != nil {
		t.Fatalf("UpdateCluster umn: %v", err)
	}
	if c := e.getCluster(id); c.UserManagedNetworking == nil || !*c.UserManagedNetworking || c.Status != wire.ClusterStatusAddingHosts {
		t.Errorf("after umn=true: user_managed_networking %v status %s, want true and adding-hosts", c.UserManagedNetworking, c.Status)
	}
	other := "https://10.0.0.1:22623/config/worker"
	if _, err := e.s.UpdateCluster(e.ctx, id, &wire.V2ClusterUpdateParams{IgnitionEndpoint: &wire.IgnitionEndpoint{URL: &other}}); err != nil {
		t.Fatalf("UpdateCluster url only: %v", err)
	}
	if c := e.getCluster(id); deref(c.IgnitionEndpoint.URL) != other || deref(c.IgnitionEndpoint.CACertificate) != ca {
		t.Errorf("after a URL-only patch: %+v, want the new URL and the CA kept", c.IgnitionEndpoint)
	}
	for _, tc := range []struct {
		name string
		ep   wire.IgnitionEndpoint
		want string
	}{
		{"relative url", wire.IgnitionEndpoint{URL: ptr("/config/worker")}, "ignition_endpoint.url: \"/config/worker\": the URL scheme must be http or https"},
		{"ftp url", wire.IgnitionEndpoint{URL: ptr("ftp://x/config/worker")}, "the URL scheme must be http or https"},
		{"no host", wire.IgnitionEndpoint{URL: ptr("https:///config/worker")}, "names no host"},
		{"unparsable url", wire.IgnitionEndpoint{URL: ptr("https://[::1/x")}, "is not a URL"},
		{"ca not base64", wire.IgnitionEndpoint{CACertificate: ptr("not base64!")}, "ignition_endpoint.ca_certificate: not base64"},
		{"ca not pem", wire.IgnitionEndpoint{CACertificate: ptr(base64.StdEncoding.EncodeToString([]byte("hello")))}, "ignition_endpoint.ca_certificate: the decoded text holds no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.UpdateCluster(e.ctx, id, &wire.V2ClusterUpdateParams{IgnitionEndpoint: &tc.ep})
			wantKind(t, "UpdateCluster", err, KindBadRequest)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
	if c := e.getCluster(id); deref(c.IgnitionEndpoint.URL) != other {
		t.Errorf("a refused patch changed the endpoint to %+v", c.IgnitionEndpoint)
	}
}

// TestDay2Host: a host of an imported cluster is a day-2 worker; once
// known, v2InstallHost moves it to installing with its pointer Ignition
// (the cluster's endpoint and CA, which Ignition's parser takes), its agent
// gets a worker's install step, and its Rebooting report makes it
// added-to-existing-cluster with assisted's words.
func TestDay2Host(t *testing.T) {
	e, clusterID, ie, ca := day2Env(t)
	id := e.addDay2Host(ie, "worker-5", 50)
	h := e.host(ie, id)
	if h.Kind != wire.HostKindAddToExistingClusterHost || h.Role != wire.HostRoleWorker || h.MachineConfigPoolName != "worker" {
		t.Errorf("day-2 host: kind %s role %s pool %q, want AddToExistingClusterHost, worker, worker", h.Kind, h.Role, h.MachineConfigPoolName)
	}
	if h.Status != wire.HostStatusKnown {
		t.Fatalf("day-2 host is %s (%s), want known; validations %s", h.Status, h.StatusInfo, h.ValidationsInfo)
	}
	if _, err := e.s.HostIgnition(e.ctx, ie, id); KindOf(err) != KindConflict {
		t.Errorf("HostIgnition before install: got %v, want a conflict", err)
	}

	got, err := e.s.InstallHost(e.ctx, ie, id)
	if err != nil {
		t.Fatalf("InstallHost: %v", err)
	}
	if got.Status != wire.HostStatusInstalling || got.Role != wire.HostRoleWorker {
		t.Errorf("InstallHost answered %s %s, want installing worker", got.Status, got.Role)
	}
	ign, err := e.s.HostIgnition(e.ctx, ie, id)
	if err != nil {
		t.Fatalf("HostIgnition: %v", err)
	}
	if err := installfiles.Check("host.ign", ign); err != nil {
		t.Errorf("pointer ignition does not parse: %v", err)
	}
	var cfg struct {
		Ignition struct {
			Version string
			Config  struct{ Merge []struct{ Source string } }
			// CAs.
			Security struct {
				TLS struct{ CertificateAuthorities []struct{ Source string } }
			}
		}
	}
	if err := json.Unmarshal(ign, &cfg); err != nil {
		t.Fatal(err)
	}
	if m := cfg.Ignition.Config.Merge; len(m) != 1 || m[0].Source != day2MCSURL {
		t.Errorf("ignition.config.merge = %+v, want [{source: %s}]", m, day2MCSURL)
	}
	if cas := cfg.Ignition.Security.TLS.CertificateAuthorities; len(cas) != 1 || cas[0].Source != "data:text/plain;base64,"+ca {
		t.Errorf("ignition.security.tls.certificateAuthorities = %+v, want the cluster's CA as a data URL", cas)
	}

	steps := e.checkIn(ie, id)
	if types := stepTypes(steps); !cmp.Equal(types[:1], []wire.StepType{wire.StepTypeInstall}) {
		t.Fatalf("installing day-2 host got steps %v, want install first", types)
	}
	var req wire.InstallCmdRequest
	if err := json.Unmarshal([]byte(steps.Instructions[0].Args[0]), &req); err != nil {
		t.Fatal(err)
	}
	if req.Role != wire.HostRoleWorker || req.ClusterID != clusterID || req.McoImage != "" || req.MustGatherImage != "" || req.BootDevice == "" {
		t.Errorf("install step: role %s cluster %s mco %q must-gather %q disk %q; want a worker of the imported cluster, no MCO or must-gather image, a disk",
			req.Role, req.ClusterID, req.McoImage, req.MustGatherImage, req.BootDevice)
	}

	for _, st := range []wire.HostStage{wire.HostStageStartingInstallation, wire.HostStageInstalling, wire.HostStageWritingImageToDisk, wire.HostStageRebooting} {
		if err := e.s.UpdateHostProgress(e.ctx, ie, id, &wire.HostProgress{CurrentStage: st}); err != nil {
			t.Fatalf("progress %s: %v", st, err)
		}
	}
	h = e.host(ie, id)
	const info = "Host has rebooted and no further updates will be posted. Please check console for progress and to possibly approve pending CSRs"
	if h.Status != wire.HostStatusAddedToExistingCluster || h.StatusInfo != info || h.Progress.CurrentStage != wire.HostStageDone || h.Progress.InstallationPercentage != 100 {
		t.Errorf("after Rebooting: %s %q stage %s %d%%, want added-to-existing-cluster %q at Done 100%%",
			h.Status, h.StatusInfo, h.Progress.CurrentStage, h.Progress.InstallationPercentage, info)
	}
	evs := e.events(EventsQuery{ClusterID: clusterID})
	if !hasEvent(evs, evHostInstallStarted, "Host worker-5 starting installation as a worker node") {
		t.Errorf("no %s event; events:\n%s", evHostInstallStarted, strings.Join(eventLines(evs), "\n"))
	}
	if c := e.getCluster(clusterID); c.Status != wire.ClusterStatusAddingHosts {
		t.Errorf("cluster is %s after its host was added, want adding-hosts still", c.Status)
	}
	// Once added, a second install is refused.
	if _, err := e.s.InstallHost(e.ctx, ie, id); KindOf(err) != KindConflict || !strings.Contains(err.Error(), "cannot install host in state added-to-existing-cluster") {
		t.Errorf("second InstallHost: got %v, want 409 cannot install host in state added-to-existing-cluster", err)
	}
}

// TestInstallHostRefused: an unknown host is a 404, a day-1 host and a
// day-2 host that is not known are 409s with assisted's words.
func TestInstallHostRefused(t *testing.T) {
	e, _, ie, _ := day2Env(t)
	discovering := e.register(ie)
	_, ie1 := e.cluster(nil)
	day1 := e.addHost(ie1, masterInv(t, "master-0", 10))
	for _, tc := range []struct {
		name       string
		ie, host   string
		kind       Kind
		wantPrefix string
	}{
		{"unknown host", ie, "3c0e5b70-5dd5-4bdb-8c0e-9a4e8a31d5a7", KindNotFound, "host 3c0e5b70-5dd5-4bdb-8c0e-9a4e8a31d5a7 not found"},
		{"host id not a uuid", ie, "x", KindBadRequest, `host_id: "x" is not a UUID`},
		{"day-1 host", ie1, day1, KindConflict, "method only allowed when adding hosts to an existing cluster"},
		{"not known", ie, discovering, KindConflict, "cannot install host in state discovering"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.s.InstallHost(e.ctx, tc.ie, tc.host)
			wantKind(t, "InstallHost", err, tc.kind)
			if !strings.HasPrefix(err.Error(), tc.wantPrefix) {
				t.Errorf("error %q, want it to start %q", err, tc.wantPrefix)
			}
		})
	}
	if h := e.host(ie, discovering); h.Status != wire.HostStatusDiscovering {
		t.Errorf("refused host is %s, want discovering still", h.Status)
	}
}

// TestDay2InstallAfterRestart: the install is durable. A service restarted
// (the store reopened, as after kill -9) before the installer reported any
// stage hands the install step out again; once a stage was reported it
// never does, and the host cannot be installed a second time.
func TestDay2InstallAfterRestart(t *testing.T) {
	e, _, ie, _ := day2Env(t)
	id := e.addDay2Host(ie, "worker-5", 50)
	if _, err := e.s.InstallHost(e.ctx, ie, id); err != nil {
		t.Fatalf("InstallHost: %v", err)
	}
	if !hasStep(e.checkIn(ie, id), wire.StepTypeInstall) {
		t.Fatal("no install step after InstallHost")
	}
	e.reopen()
	if h := e.host(ie, id); h.Status != wire.HostStatusInstalling {
		t.Fatalf("after reopen the host is %s, want installing", h.Status)
	}
	if !hasStep(e.checkIn(ie, id), wire.StepTypeInstall) {
		t.Error("after reopen, no stage reported: no install step, want it again")
	}
	if _, err := e.s.HostIgnition(e.ctx, ie, id); err != nil {
		t.Errorf("HostIgnition after reopen: %v", err)
	}
	if err := e.s.UpdateHostProgress(e.ctx, ie, id, &wire.HostProgress{CurrentStage: wire.HostStageStartingInstallation}); err != nil {
		t.Fatalf("progress: %v", err)
	}
	e.reopen()
	if steps := e.checkIn(ie, id); hasStep(steps, wire.StepTypeInstall) {
		t.Errorf("after a stage was reported and a reopen: install step handed out again (%v)", stepTypes(steps))
	}
	if _, err := e.s.InstallHost(e.ctx, ie, id); KindOf(err) != KindConflict {
		t.Errorf("InstallHost of an installing host: got %v, want 409", err)
	}
}

func hasStep(s *wire.Steps, typ wire.StepType) bool {
	for _, st := range s.Instructions {
		if st.StepType == typ {
			return true
		}
	}
	return false
}

// TestIgnitionEndpoint: where a day-2 host's pointer Ignition sends it, as
// assisted's GetIgnitionEndpointAndCert decides.
func TestIgnitionEndpoint(t *testing.T) {
	const ca = "Q0E="
	for _, tc := range []struct {
		name    string
		api     string
		ep      *wire.IgnitionEndpoint
		pool    string
		want    string
		wantCA  string
		wantErr bool
	}{
		{"node-joiner's whole URL", day2APIName, &wire.IgnitionEndpoint{URL: ptr(day2MCSURL), CACertificate: ptr(ca)}, "", day2MCSURL, ca, false},
		{"URL without the pool", day2APIName, &wire.IgnitionEndpoint{URL: ptr("https://foo.bar:33735/acme")}, "", "https://foo.bar:33735/acme/worker", "", false},
		{"host's pool", day2APIName, &wire.IgnitionEndpoint{URL: ptr("https://foo.bar:33735/config")}, "infra", "https://foo.bar:33735/config/infra", "", false},
		{"no URL, a CA: https at api-int", day2APIName, &wire.IgnitionEndpoint{CACertificate: ptr(ca)}, "", "https://api-int.ostest.example.com:22623/config/worker", ca, false},
		{"nothing: http on 22624", day2APIName, nil, "", "http://api.ostest.example.com:22624/config/worker", "", false},
		{"an address", "192.168.111.5", nil, "", "http://192.168.111.5:22624/config/worker", "", false},
		{"an IPv6 address", "fd00::5", &wire.IgnitionEndpoint{CACertificate: ptr(ca)}, "", "https://[fd00::5]:22623/config/worker", ca, false},
		{"no name, no URL", "", nil, "", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clusterRec{c: wire.Cluster{Kind: wire.ClusterKindAddHostsCluster, APIVIPDNSName: &tc.api, IgnitionEndpoint: tc.ep}}
			h := &hostRec{h: wire.Host{Kind: wire.HostKindAddToExistingClusterHost, Role: wire.HostRoleWorker, MachineConfigPoolName: tc.pool}}
			got, gotCA, err := ignitionEndpoint(c, h, wire.HostRoleWorker)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ignitionEndpoint error %v, want error %v", err, tc.wantErr)
			}
			if got != tc.want || gotCA != tc.wantCA {
				t.Errorf("ignitionEndpoint = %q, CA %q; want %q, CA %q", got, gotCA, tc.want, tc.wantCA)
			}
		})
	}
}

// TestDay2HostHintsMatchNoDisk: a day-2 host whose host config's root
// device hints match none of its disks is insufficient, the hints
// validation failing with the hints and the disks in its message, and
// cannot be installed.
func TestDay2HostHintsMatchNoDisk(t *testing.T) {
	const mac = "52:54:00:00:00:5a"
	inv := masterInv(t, "worker-5", 50)
	for _, nic := range inv.Interfaces {
		if len(nic.IPv4Addresses) > 0 {
			nic.MACAddress = mac
			break
		}
	}
	configs := []manifests.HostConfig{{Name: "worker-5", MACs: []string{mac}, Hints: &manifests.RootDeviceHints{DeviceName: "/dev/sdz"}}}
	e := newEnv(t, func(c *Config) { c.HostConfigs = configs })
	clusterID := e.importCluster()
	ie, err := e.s.RegisterInfraEnv(e.ctx, &wire.InfraEnvCreateParams{Name: "ostest-day2", PullSecret: testPullSecret, ClusterID: &clusterID})
	if err != nil {
		t.Fatalf("RegisterInfraEnv: %v", err)
	}
	id := e.addHost(ie.ID, inv)
	e.postCheck(ie.ID, id, wire.StepTypeDomainResolution, wire.DomainResolutionResponse{
		Resolutions: []*wire.DomainResolutionResponseResolutionsItem{{DomainName: day2APIName, IPv4Addresses: []string{testAPIVIP}}},
	})
	h := e.host(ie.ID, id)
	vid := string(wire.HostValidationIDInstallationDiskMatchesHints)
	r := resultsByID(t, h.ValidationsInfo)[vid]
	wantMsg := "Host config worker-5: " + validation.NoDiskMatchesHints(configs[0].Hints, inv)
	if r.Status != wire.ValidationFailure || r.Message != wantMsg {
		t.Errorf("%s = %s %q, want failure %q", vid, r.Status, r.Message, wantMsg)
	}
	if h.Status != wire.HostStatusInsufficient || !strings.Contains(h.StatusInfo, wantMsg) {
		t.Errorf("host is %s (%q), want insufficient naming %q", h.Status, h.StatusInfo, wantMsg)
	}
	if _, err := e.s.InstallHost(e.ctx, ie.ID, id); KindOf(err) != KindConflict || !strings.Contains(err.Error(), "cannot install host in state insufficient") {
		t.Errorf("InstallHost: got %v, want 409 cannot install host in state insufficient", err)
	}
}

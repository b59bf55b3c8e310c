package api_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/google/uuid"

	"github.com/nodezero/nodezero/daemon/api"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/assisted/assistedtest"
	"github.com/nodezero/nodezero/daemon/validation"
	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/wire"
)

// TestSwaggerConformance drives a real service over HTTP the way agents,
// the installer, ABI's scripts and wait-for do: a cluster of three masters
// and two workers from registration to installed, a single-node cluster
// cancelled while it prepares, a host of a cluster whose VIPs come from
// DHCP, and a host added to an installed cluster (day 2: import, install
// of the one host, added-to-existing-cluster). Every answer the service gave is then judged by the swagger:
// each body against the response schema of its route and status, each
// instructions answer against "steps", and each step's JSON-in-JSON args
// against the request definition of its step type, with the checks the
// upstream agent adds before it runs a step (assisted-installer-agent
// src/commands/actions: arg counts, the inventory's host id, must-gather
// images, OpenShift version, installer args, disk paths).
func TestSwaggerConformance(t *testing.T) {
	sw := loadSwagger(t)
	rec := &recorder{}
	h, err := startHarnessWith(t.TempDir(), func(c *assisted.Config) {
		c.MaxWait = 30 * time.Second // the install step waits for the preparation
		c.ProbeSettle = -1
		c.Images = conformanceImages
	}, rec.wrap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	d := &conformanceDriver{t: t, h: h, ctx: context.Background(), seen: map[wire.HostStatus][]wire.StepType{}, roles: map[wire.HostRole]bool{},
		installs: map[string]wire.InstallCmdRequest{}}
	d.emptyAnswers()
	d.installMultiNode()
	d.cancelSingleNode()
	d.dhcpVIPs()
	d.addHostsToInstalled()

	var probs []string
	ops := map[string]bool{}
	registered := map[string]bool{}
	for _, e := range rec.all() {
		probs = append(probs, checkExchange(sw, e, registered, ops)...)
	}
	for _, p := range probs {
		t.Error(p)
	}

	// What the run must have shown, so that a quiet run means something.
	for _, op := range conformanceOps {
		if !ops[op] {
			t.Errorf("no %s answer was judged: the scenario must exercise it", op)
		}
	}
	for st, want := range conformanceSteps {
		got := d.seen[st]
		for _, typ := range want {
			if !slices.Contains(got, typ) {
				t.Errorf("host status %s: no %s step was handed out (got %v)", st, typ, got)
			}
		}
	}
	for _, r := range []wire.HostRole{wire.HostRoleBootstrap, wire.HostRoleMaster, wire.HostRoleWorker} {
		if !d.roles[r] {
			t.Errorf("no install step for role %s was handed out", r)
		}
	}
	// The install step as assisted fills it: the payload's images, the
	// version, check_cvo sent, the bootable disk that is not installed on
	// formatted.
	for name, req := range d.installs {
		if req.InstallerImage != conformanceImages.Installer || req.ControllerImage != conformanceImages.Controller ||
			req.McoImage != conformanceImages.MCO || req.MustGatherImage != conformanceImages.MustGather {
			t.Errorf("%s: install images %q %q %q %q, want the payload's %+v", name, req.InstallerImage, req.ControllerImage, req.McoImage, req.MustGatherImage, conformanceImages)
		}
		if req.OpenshiftVersion == "" || req.CheckCvo == nil || !req.NotifyNumReboots || !req.EnableSkipMcoReboot {
			t.Errorf("%s: install request %+v: want openshift_version, check_cvo, notify_num_reboots and enable_skip_mco_reboot (4.18)", name, req)
		}
		wantFormat := []string{}
		if name == "conform-0" {
			wantFormat = []string{conformanceInventory(0).Disks[1].ID}
		}
		if !slices.Equal(req.DisksToFormat, wantFormat) {
			t.Errorf("%s: disks_to_format %q, want %q", name, req.DisksToFormat, wantFormat)
		}
	}
	if d.day2Install.Role != wire.HostRoleWorker || d.day2Install.McoImage != "" || d.day2Install.MustGatherImage != "" ||
		d.day2Install.InstallerImage != conformanceImages.Installer || d.day2Install.BootDevice == "" {
		t.Errorf("day-2 install request %+v: want a worker's, the payload's installer, no MCO or must-gather image, a disk", d.day2Install)
	}
	if len(d.installs) != 6 {
		t.Errorf("install steps for %v, want the five hosts and the single node", sortedKeys(d.installs))
	}
	if !d.releaseHostResolved {
		t.Errorf("the domain-resolution step did not list the release image's registry %q", validation.ReleaseImageHost(conformanceRelease))
	}
}

// conformanceOps are the operations whose answers the run must judge.
var conformanceOps = []string{
	"v2RegisterCluster", "v2ListClusters", "v2GetCluster", "V2UpdateCluster", "ListClusterHosts",
	"v2InstallCluster", "V2CancelInstallation", "v2UpdateClusterInstallConfig",
	"V2CreateClusterManifest", "V2ListClusterManifests",
	"V2DownloadClusterFiles", "V2DownloadClusterCredentials", "V2GetCredentials", "v2CompleteInstallation",
	"v2DownloadHostIgnition",
	"RegisterInfraEnv", "ListInfraEnvs", "GetInfraEnv", "UpdateInfraEnv",
	"v2RegisterHost", "v2ListHosts", "v2GetHost", "v2UpdateHost",
	"v2GetNextSteps", "v2PostStepReply", "v2UpdateHostInstallProgress", "v2UpdateHostLogsProgress",
	"v2ListEvents",
	"v2ImportCluster", "v2InstallHost",
}

// conformanceSteps are the steps each host status must have handed out in
// the run.
var conformanceSteps = map[wire.HostStatus][]wire.StepType{
	wire.HostStatusDiscovering:              {wire.StepTypeInventory},
	wire.HostStatusInsufficient:             {wire.StepTypeInventory, wire.StepTypeConnectivityCheck, wire.StepTypeFreeNetworkAddresses, wire.StepTypeNTPSynchronizer, wire.StepTypeDomainResolution, wire.StepTypeVerifyVIPs, wire.StepTypeDHCPLeaseAllocate},
	wire.HostStatusKnown:                    {wire.StepTypeInventory, wire.StepTypeConnectivityCheck, wire.StepTypeNTPSynchronizer, wire.StepTypeDomainResolution},
	wire.HostStatusPreparingForInstallation: {wire.StepTypeInstallationDiskSpeedCheck, wire.StepTypeContainerImageAvailability},
	wire.HostStatusInstalling:               {wire.StepTypeInstall},
	wire.HostStatusCancelled:                {wire.StepTypeLogsGather, wire.StepTypeStopInstallation},
	wire.HostStatusPendingForInput:          {wire.StepTypeInventory, wire.StepTypeNTPSynchronizer, wire.StepTypeDomainResolution},
}

// argRule is how the upstream agent takes a step's args: how many there
// are, the definition each JSON arg is validated against ("" for one that
// is not JSON), and the checks it adds.
type argRule struct {
	defs  []string
	extra func(args []string) error
}

// stepArgRules is every step type the swagger's step-type enum names. A
// step type missing here fails the test.
var stepArgRules = map[wire.StepType]argRule{
	wire.StepTypeInventory:                  {defs: []string{""}, extra: inventoryArg},
	wire.StepTypeConnectivityCheck:          {defs: []string{"connectivity-check-params"}},
	wire.StepTypeFreeNetworkAddresses:       {defs: []string{"free_addresses_request"}},
	wire.StepTypeDHCPLeaseAllocate:          {defs: []string{"dhcp_allocation_request"}},
	wire.StepTypeNTPSynchronizer:            {defs: []string{"ntp_synchronization_request"}},
	wire.StepTypeDomainResolution:           {defs: []string{"domain_resolution_request"}},
	wire.StepTypeVerifyVIPs:                 {defs: []string{"verify_vips_request"}},
	wire.StepTypeInstallationDiskSpeedCheck: {defs: []string{"disk_speed_check_request", ""}, extra: diskSpeedTimeoutArg},
	wire.StepTypeContainerImageAvailability: {defs: []string{"container_image_availability_request"}},
	wire.StepTypeInstall:                    {defs: []string{"install_cmd_request"}, extra: installArg},
	wire.StepTypeLogsGather:                 {defs: []string{"logs_gather_cmd_request"}},
	wire.StepTypeStopInstallation:           {defs: []string{}},
	wire.StepTypeTangConnectivityCheck:      {defs: []string{"tang_connectivity_request"}},
	wire.StepTypeAPIVIPConnectivityCheck:    {defs: []string{"api_vip_connectivity_request"}},
	wire.StepTypeUpgradeAgent:               {defs: []string{"upgrade_agent_request"}},
	wire.StepTypeDownloadBootArtifacts:      {defs: []string{"download_boot_artifacts_request"}},
	wire.StepTypeRebootForReclaim:           {defs: []string{"reboot_for_reclaim_request"}},
}

// checkExchange judges one answer. registered collects the host ids whose
// registration was answered, ops the operations judged.
func checkExchange(sw *swaggerDoc, e exchange, registered, ops map[string]bool) []string {
	op, _ := sw.operation(e.method, e.path)
	if op != nil && op.ID == "v2RegisterHost" && e.status == http.StatusCreated {
		var probs []string
		e, probs = registrationAnswer(e, registered)
		id, more := sw.checkResponse(e)
		ops[id] = true
		probs = append(probs, more...)
		return append(probs, checkRunnerCommand(sw, e)...)
	}
	id, probs := sw.checkResponse(e)
	if id == "" {
		return probs
	}
	ops[id] = true
	if id == "v2GetNextSteps" && e.status == http.StatusOK {
		probs = append(probs, checkSteps(sw, e)...)
	}
	if e.status < 300 {
		probs = append(probs, checkEmbedded(sw, e)...)
	}
	return probs
}

// embeddedDocs are the host fields that carry a JSON document as a string,
// with the definition of the document.
var embeddedDocs = map[string]string{
	"inventory":               "inventory",
	"connectivity":            "connectivity-report",
	"domain_name_resolutions": "domain_resolution_response",
	"free_addresses":          "free_networks_addresses",
}

// checkEmbedded validates the JSON-in-JSON documents of every host in an
// answer (a host, a host list, a cluster or a cluster list).
func checkEmbedded(sw *swaggerDoc, e exchange) []string {
	var v any
	if err := json.Unmarshal(e.body, &v); err != nil {
		return nil // not JSON: checkResponse says so where it matters
	}
	var hosts []map[string]any
	var collect func(v any, depth int)
	collect = func(v any, depth int) {
		switch x := v.(type) {
		case []any:
			for _, o := range x {
				collect(o, depth)
			}
		case map[string]any:
			if k, _ := x["kind"].(string); k == "Host" || k == "AddToExistingClusterHost" {
				hosts = append(hosts, x)
			}
			if depth == 0 {
				collect(x["hosts"], 1)
			}
		}
	}
	collect(v, 0)
	var probs []string
	for _, h := range hosts {
		if info, _ := h["status_info"].(string); strings.HasSuffix(strings.TrimSpace(info), ":") {
			probs = append(probs, fmt.Sprintf("%s: host %v status_info %q ends in an empty list", e, h["id"], info))
		}
		for _, field := range sortedKeys(embeddedDocs) {
			doc, _ := h[field].(string)
			if doc == "" {
				continue
			}
			if err := sw.check(embeddedDocs[field], []byte(doc)); err != nil {
				probs = append(probs, fmt.Sprintf("%s: host %v %s %s: %s: %v", e, h["id"], field, clip(doc), embeddedDocs[field], err))
			}
		}
	}
	return probs
}

// registrationAnswer: a host's first registration is answered with its
// status; a re-registration with status and status_info null, as
// assisted-service answers it (its swagger requires both; the generated
// client takes null). For the schema those two are filled in as a first
// registration has them, once checked to be null.
func registrationAnswer(e exchange, registered map[string]bool) (exchange, []string) {
	var doc map[string]any
	if err := json.Unmarshal(e.body, &doc); err != nil {
		return e, []string{fmt.Sprintf("%s: not JSON: %v", e, err)}
	}
	id, _ := doc["id"].(string)
	if !registered[id] {
		registered[id] = true
		return e, nil
	}
	var probs []string
	for _, k := range []string{"status", "status_info"} {
		if v, ok := doc[k]; !ok || v != nil {
			probs = append(probs, fmt.Sprintf("%s: re-registration of %s: %s = %v, want null as assisted-service answers", e, id, k, v))
		}
	}
	doc["status"], doc["status_info"] = string(wire.HostStatusDiscovering), ""
	b, _ := json.Marshal(doc)
	e.body = b
	return e, probs
}

// checkRunnerCommand validates next_step_runner_command's one arg, which
// the agent decodes into next_step_cmd_request.
func checkRunnerCommand(sw *swaggerDoc, e exchange) []string {
	var r wire.HostRegistrationResponse
	if err := json.Unmarshal(e.body, &r); err != nil {
		return []string{fmt.Sprintf("%s: %v", e, err)}
	}
	if r.NextStepRunnerCommand == nil || len(r.NextStepRunnerCommand.Args) != 1 {
		return []string{fmt.Sprintf("%s: next_step_runner_command = %+v, want one arg", e, r.NextStepRunnerCommand)}
	}
	if err := sw.check("next_step_cmd_request", []byte(r.NextStepRunnerCommand.Args[0])); err != nil {
		return []string{fmt.Sprintf("%s: next_step_runner_command.args[0] %s: next_step_cmd_request: %v", e, r.NextStepRunnerCommand.Args[0], err)}
	}
	return nil
}

// checkSteps validates each instruction's args by its step type.
func checkSteps(sw *swaggerDoc, e exchange) []string {
	var steps wire.Steps
	if err := json.Unmarshal(e.body, &steps); err != nil {
		return []string{fmt.Sprintf("%s: %v", e, err)}
	}
	var probs []string
	for _, st := range steps.Instructions {
		if st == nil {
			probs = append(probs, fmt.Sprintf("%s: a null instruction", e))
			continue
		}
		where := fmt.Sprintf("%s: step %s (%s)", e, st.StepType, st.StepID)
		rule, ok := stepArgRules[st.StepType]
		if !ok {
			probs = append(probs, where+": no request definition is known for this step type")
			continue
		}
		if len(st.Args) != len(rule.defs) {
			probs = append(probs, fmt.Sprintf("%s: %d args, the agent takes %d", where, len(st.Args), len(rule.defs)))
			continue
		}
		for i, def := range rule.defs {
			if def == "" {
				continue
			}
			if err := sw.check(def, []byte(st.Args[i])); err != nil {
				probs = append(probs, fmt.Sprintf("%s: args[%d] %s: %s: %v", where, i, clip(st.Args[i]), def, err))
			}
		}
		if rule.extra != nil {
			if err := rule.extra(st.Args); err != nil {
				probs = append(probs, fmt.Sprintf("%s: %v", where, err))
			}
		}
	}
	return probs
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func inventoryArg(args []string) error {
	if !strfmt.IsUUID(args[0]) {
		return fmt.Errorf("inventory arg %q is not a UUID", args[0])
	}
	return nil
}

func diskSpeedTimeoutArg(args []string) error {
	if _, err := strconv.ParseFloat(args[1], 64); err != nil {
		return fmt.Errorf("disk speed check timeout %q is not a number", args[1])
	}
	return nil
}

// The agent's own checks of an install request (install_cmd.go Validate).
var (
	imageRefRE = regexp.MustCompile(`^(([a-zA-Z0-9\-\.]+)(:[0-9]+)?\/)?[a-z0-9\._\-\/@]+[?::a-zA-Z0-9_\-.]+$`)
	// versionRE is what hashicorp/go-version parses.
	versionRE = regexp.MustCompile(`^v?([0-9]+(\.[0-9]+)*?)(-([0-9]+[0-9A-Za-z\-~]*(\.[0-9A-Za-z\-~]+)*)|(-?([A-Za-z\-~]+[0-9A-Za-z\-~]*(\.[0-9A-Za-z\-~]+)*)))?(\+([0-9A-Za-z\-~]+(\.[0-9A-Za-z\-~]+)*))?$`)
)

func installArg(args []string) error {
	var req struct {
		BootDevice       string   `json:"boot_device"`
		DisksToFormat    []string `json:"disks_to_format"`
		MustGatherImage  string   `json:"must_gather_image"`
		OpenshiftVersion string   `json:"openshift_version"`
		InstallerArgs    string   `json:"installer_args"`
	}
	if err := json.Unmarshal([]byte(args[0]), &req); err != nil {
		return err
	}
	var probs []string
	if req.MustGatherImage != "" {
		images := map[string]string{}
		if err := json.Unmarshal([]byte(req.MustGatherImage), &images); err != nil {
			images = map[string]string{"ocp": req.MustGatherImage}
		}
		for op, img := range images {
			if !imageRefRE.MatchString(img) {
				probs = append(probs, fmt.Sprintf("must_gather_image %q does not match the image pattern", img))
			}
			if !slices.Contains([]string{"cnv", "lso", "ocs", "odf", "ocp"}, op) {
				probs = append(probs, fmt.Sprintf("must_gather_image: operator %q is not one of cnv, lso, ocs, odf, ocp", op))
			}
		}
	}
	if req.OpenshiftVersion != "" && !versionRE.MatchString(req.OpenshiftVersion) {
		probs = append(probs, fmt.Sprintf("openshift_version %q is not a version", req.OpenshiftVersion))
	}
	if req.InstallerArgs != "" {
		var a []string
		if err := json.Unmarshal([]byte(req.InstallerArgs), &a); err != nil {
			probs = append(probs, fmt.Sprintf("installer_args %q is not a JSON array of strings", req.InstallerArgs))
		}
	}
	for _, d := range append(slices.Clone(req.DisksToFormat), req.BootDevice) {
		if !strings.HasPrefix(d, "/dev/") {
			probs = append(probs, fmt.Sprintf("disk %q does not start with /dev/", d))
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("the agent refuses it: %s", strings.Join(probs, "; "))
	}
	return nil
}

// conformanceImages are the release images node zero's service takes from
// its payload, named as a release names them.
var conformanceImages = assisted.InstallImages{
	Installer:  "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:1111111111111111111111111111111111111111111111111111111111111111",
	Controller: "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:2222222222222222222222222222222222222222222222222222222222222222",
	MCO:        "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:3333333333333333333333333333333333333333333333333333333333333333",
	MustGather: "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:4444444444444444444444444444444444444444444444444444444444444444",
	Agent:      agentImage,
}

// conformanceRelease is the release the clusters name: its registry must
// appear in the domain-resolution step.
const conformanceRelease = "quay.io/openshift-release-dev/ocp-release:4.18.0-x86_64"

// conformanceDriver plays the clients. seen lists, per host status, the
// step types handed out; roles the install steps' roles.
type conformanceDriver struct {
	t                   *testing.T
	h                   *harness
	ctx                 context.Context
	seen                map[wire.HostStatus][]wire.StepType
	roles               map[wire.HostRole]bool
	installs            map[string]wire.InstallCmdRequest // by host name, day 1
	day2Install         wire.InstallCmdRequest
	releaseHostResolved bool
}

// cHost is a host the driver plays the agent of.
type cHost struct {
	id, name string
	inv      *wire.Inventory
}

func (d *conformanceDriver) fatalf(format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf(format, args...)
}

// conformanceInventory is host i's inventory: master-class hardware on
// 192.168.111.0/24. Host 0 has a second, small disk that boots: it is not
// eligible for installation and must be formatted.
func conformanceInventory(i int) *wire.Inventory {
	mac := fmt.Sprintf("52:54:00:c0:00:%02x", i+1)
	inv := &wire.Inventory{
		Hostname: fmt.Sprintf("conform-%d", i),
		CPU:      &wire.CPU{Count: 8, Architecture: "x86_64", ModelName: "test cpu", Flags: []string{"fpu", "vmx"}},
		Memory:   &wire.Memory{PhysicalBytes: 32 << 30, UsableBytes: 32 << 30, PhysicalBytesMethod: wire.MemoryMethodGhw},
		Disks: []*wire.Disk{{
			ID: fmt.Sprintf("/dev/disk/by-id/wwn-0x5000c500a0%06d", i), Name: "vda", Path: "/dev/vda", DriveType: wire.DriveTypeSSD,
			SizeBytes: 256 << 30, InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true},
		}},
		Interfaces: []*wire.Interface{{
			Name: "eth0", Type: "physical", MACAddress: mac, MTU: 1500, HasCarrier: true,
			Flags:         []string{"up", "broadcast", "multicast", "running"},
			IPv4Addresses: []string{fmt.Sprintf("192.168.111.%d/24", 20+i)},
		}},
		Routes: []*wire.Route{
			{Destination: "0.0.0.0", Gateway: "192.168.111.1", Interface: "eth0", Family: 2},
			{Destination: "192.168.111.0", Interface: "eth0", Family: 2},
		},
		Boot:         &wire.Boot{CurrentBootMode: "uefi"},
		SystemVendor: &wire.SystemVendor{Manufacturer: "test", ProductName: "test", Virtual: true},
		TPMVersion:   wire.InventoryTPMVersionNone,
	}
	if i == 0 {
		inv.Disks = append(inv.Disks, &wire.Disk{
			ID: "/dev/disk/by-id/wwn-0x5000c500b0000000", Name: "vdb", Path: "/dev/vdb", DriveType: wire.DriveTypeSSD,
			SizeBytes: 8 << 30, Bootable: true,
			InstallationEligibility: &wire.DiskInstallationEligibility{NotEligibleReasons: []string{"Disk is too small (disk only has 8.6 GB, but 100 GB are required)"}},
		})
	}
	return inv
}

// checkIn asks for a host's instructions as the upstream agent does
// (?timestamp=, no wait unless given) and notes what its status got.
func (d *conformanceDriver) checkIn(infraEnvID string, h *cHost, wait time.Duration) *wire.Steps {
	d.t.Helper()
	steps, err := d.h.client.NextSteps(d.ctx, infraEnvID, h.id, time.Now().Unix(), wait)
	if err != nil {
		d.fatalf("instructions for %s: %v", h.name, err)
	}
	host, err := d.h.client.GetHost(d.ctx, infraEnvID, h.id)
	if err != nil {
		d.fatalf("GetHost %s: %v", h.name, err)
	}
	for _, st := range steps.Instructions {
		if st == nil {
			continue
		}
		d.seen[host.Status] = append(d.seen[host.Status], st.StepType)
		switch st.StepType {
		case wire.StepTypeInstall:
			var req wire.InstallCmdRequest
			if err := json.Unmarshal([]byte(st.Args[0]), &req); err == nil {
				d.roles[req.Role] = true
				d.installs[h.name] = req
			}
		case wire.StepTypeDomainResolution:
			if len(st.Args) == 1 && strings.Contains(st.Args[0], `"domain_name":"`+validation.ReleaseImageHost(conformanceRelease)+`"`) {
				d.releaseHostResolved = true
			}
		}
	}
	return steps
}

func (d *conformanceDriver) reply(infraEnvID string, h *cHost, typ wire.StepType, stepID string, v any) {
	d.t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		d.fatalf("%v", err)
	}
	if err := d.h.client.PostStepReply(d.ctx, infraEnvID, h.id, wire.StepReply{StepType: typ, StepID: stepID, Output: string(out)}); err != nil {
		d.fatalf("reply %s for %s: %v", typ, h.name, err)
	}
}

// user sends a request with the user token and wants status want.
func (d *conformanceDriver) user(method, path, body string, want int) response {
	d.t.Helper()
	r := d.h.user(d.t, method, path, body)
	if r.status != want {
		d.fatalf("%s %s = %d %s, want %d", method, path, r.status, r.body, want)
	}
	return r
}

func (d *conformanceDriver) agent(method, path, body string, want int) response {
	d.t.Helper()
	r := d.h.agent(d.t, method, path, body)
	if r.status != want {
		d.fatalf("%s %s = %d %s, want %d", method, path, r.status, r.body, want)
	}
	return r
}

// emptyAnswers reads lists before there is anything in them: they are
// empty lists, not null.
func (d *conformanceDriver) emptyAnswers() {
	d.t.Helper()
	d.user("GET", api.Base+"/clusters", "", http.StatusOK)
	d.user("GET", api.Base+"/infra-envs", "", http.StatusOK)
	d.user("GET", api.Base+"/events", "", http.StatusOK)
	cl, err := d.h.client.RegisterCluster(d.ctx, wire.ClusterCreateParams{
		Name: "empty", OpenshiftVersion: "4.18", PullSecret: pullSecret, BaseDNSDomain: "example.com",
	})
	if err != nil {
		d.fatalf("RegisterCluster: %v", err)
	}
	ie, err := d.h.client.RegisterInfraEnv(d.ctx, wire.InfraEnvCreateParams{Name: "empty", PullSecret: pullSecret, ClusterID: &cl.ID})
	if err != nil {
		d.fatalf("RegisterInfraEnv: %v", err)
	}
	f := fixture{clusterID: cl.ID, infraEnvID: ie.ID}
	for _, p := range []string{clusterPat, clusterPat + "/hosts", clusterPat + "/manifests", infraEnvPat, infraEnvPat + "/hosts"} {
		d.user("GET", f.path(p), "", http.StatusOK)
	}
	d.user("GET", api.Base+"/events?cluster_id="+cl.ID+"&severities=critical", "", http.StatusOK)
	d.user("GET", api.Base+"/infra-envs?cluster_id="+uuid.NewString(), "", http.StatusOK)
	hh := &cHost{id: uuid.NewString(), name: "empty-0"}
	if _, err := d.h.client.RegisterHost(d.ctx, ie.ID, wire.HostCreateParams{HostID: hh.id, DiscoveryAgentVersion: agentImage}); err != nil {
		d.fatalf("RegisterHost: %v", err)
	}
	d.checkIn(ie.ID, hh, 0) // inventory
	d.checkIn(ie.ID, hh, 0) // nothing due
	// With an inventory but no VIPs or machine network, the host waits for
	// input.
	hh.inv = conformanceInventory(2)
	d.reply(ie.ID, hh, wire.StepTypeInventory, "inventory-00000001", hh.inv)
	d.checkIn(ie.ID, hh, 0)
}

// installMultiNode takes a cluster of three masters and two workers from
// registration to installed.
func (d *conformanceDriver) installMultiNode() {
	d.t.Helper()
	c := d.h.client
	cp := int64(3)
	cl, err := c.RegisterCluster(d.ctx, wire.ClusterCreateParams{
		Name: "conform", OpenshiftVersion: "4.18", OCPReleaseImage: conformanceRelease, PullSecret: pullSecret,
		BaseDNSDomain: "example.com", ControlPlaneCount: &cp,
		APIVIPs:     []*wire.APIVIP{{IP: "192.168.111.5"}},
		IngressVIPs: []*wire.IngressVIP{{IP: "192.168.111.4"}},
	})
	if err != nil {
		d.fatalf("RegisterCluster: %v", err)
	}
	ie, err := c.RegisterInfraEnv(d.ctx, wire.InfraEnvCreateParams{Name: "conform", PullSecret: pullSecret, ClusterID: &cl.ID})
	if err != nil {
		d.fatalf("RegisterInfraEnv: %v", err)
	}
	f := fixture{clusterID: cl.ID, infraEnvID: ie.ID}
	// ABI's scripts: the infra-env's NTP sources, a manifest, the
	// install-config overrides.
	d.user("PATCH", f.path(infraEnvPat+""), `{"additional_ntp_sources":"192.168.111.1"}`, http.StatusCreated)
	if _, err := c.CreateClusterManifest(d.ctx, cl.ID, wire.CreateManifestParams{FileName: fixtureManifest, Content: fixtureManifestB64}); err != nil {
		d.fatalf("CreateClusterManifest: %v", err)
	}
	d.user("GET", f.path(clusterPat+"/manifests"), "", http.StatusOK)
	d.user("PATCH", f.path(clusterPat+"/install-config"), strconv.Quote(`{"fips":false}`), http.StatusCreated)

	var hosts []*cHost
	for i := range 5 {
		hh := &cHost{id: uuid.NewString(), name: fmt.Sprintf("conform-%d", i), inv: conformanceInventory(i)}
		if _, err := c.RegisterHost(d.ctx, ie.ID, wire.HostCreateParams{HostID: hh.id, DiscoveryAgentVersion: agentImage}); err != nil {
			d.fatalf("RegisterHost %s: %v", hh.name, err)
		}
		d.checkIn(ie.ID, hh, 0) // discovering: inventory
		d.reply(ie.ID, hh, wire.StepTypeInventory, "inventory-00000001", hh.inv)
		hosts = append(hosts, hh)
	}
	// Host 4's agent restarts: it registers again and sends its inventory
	// again, as the upstream agent does when its step runner exits.
	if _, err := c.RegisterHost(d.ctx, ie.ID, wire.HostCreateParams{HostID: hosts[4].id, DiscoveryAgentVersion: agentImage}); err != nil {
		d.fatalf("RegisterHost again: %v", err)
	}
	d.checkIn(ie.ID, hosts[4], 0)
	d.reply(ie.ID, hosts[4], wire.StepTypeInventory, "inventory-00000002", hosts[4].inv)

	for _, hh := range hosts {
		d.checkIn(ie.ID, hh, 0) // insufficient: the checks
	}
	cl = d.getCluster(cl.ID)
	if err := assistedtest.AnswerChecks(d.ctx, c, c, ie.ID, cl); err != nil {
		d.fatalf("AnswerChecks: %v", err)
	}
	roles := []string{"master", "master", "master", "worker", "worker"}
	for i, hh := range hosts {
		role := wire.HostUpdateParamsHostRole(roles[i])
		if _, err := c.UpdateHost(d.ctx, ie.ID, hh.id, wire.HostUpdateParams{HostRole: &role}); err != nil {
			d.fatalf("UpdateHost %s: %v", hh.name, err)
		}
	}
	for _, hh := range hosts {
		d.checkIn(ie.ID, hh, 0) // known
	}
	if cl = d.getCluster(cl.ID); cl.Status != wire.ClusterStatusReady {
		d.fatalf("cluster %s (%s), want ready; validations %s", cl.Status, cl.StatusInfo, cl.ValidationsInfo)
	}
	// The reads ABI's scripts and wait-for make.
	d.user("GET", api.Base+"/clusters", "", http.StatusOK)
	d.user("GET", api.Base+"/infra-envs", "", http.StatusOK)
	d.user("GET", f.path(infraEnvPat+""), "", http.StatusOK)
	d.user("GET", f.path(infraEnvPat+"/hosts"), "", http.StatusOK)
	d.user("GET", f.path(clusterPat+"/hosts"), "", http.StatusOK)
	d.user("GET", api.Base+"/events?cluster_id="+cl.ID, "", http.StatusOK)
	d.user("PATCH", f.path(clusterPat+""), `{"ssh_public_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHd1c2VyQGV4YW1wbGUgdGVzdCBrZXkgZm9yIGNvbmZvcm0 user@example"}`, http.StatusCreated)

	if _, err := c.InstallCluster(d.ctx, cl.ID); err != nil {
		d.fatalf("InstallCluster: %v", err)
	}
	for _, hh := range hosts {
		d.prepare(ie.ID, hh)
	}
	for _, hh := range hosts {
		d.awaitInstall(ie.ID, cl.ID, hh)
	}
	// What the installer reads and reports.
	d.agent("GET", f.path(clusterPat+"")+"?exclude-hosts=true", "", http.StatusOK)
	d.agent("GET", f.path(clusterPat+"/hosts"), "", http.StatusOK)
	for _, name := range []string{"bootstrap.ign", "master.ign", "worker.ign", "metadata.json", "install-config.yaml"} {
		d.agent("GET", f.path(clusterPat+"/downloads/files")+"?file_name="+name, "", http.StatusOK)
	}
	d.agent("GET", api.Base+"/infra-env/"+ie.ID+"/hosts/"+hosts[0].id+"/downloads/ignition", "", http.StatusOK)
	for _, hh := range hosts {
		host, err := c.GetHost(d.ctx, ie.ID, hh.id)
		if err != nil {
			d.fatalf("GetHost: %v", err)
		}
		for _, st := range host.ProgressStages {
			if err := c.UpdateHostInstallProgress(d.ctx, ie.ID, hh.id, wire.HostProgress{CurrentStage: st}); err != nil {
				d.fatalf("progress %s for %s: %v", st, hh.name, err)
			}
			if st == wire.HostStageInstalling {
				d.checkIn(ie.ID, hh, 0) // installing-in-progress
			}
		}
	}
	d.agent("GET", f.path(clusterPat+"/downloads/credentials")+"?file_name=kubeconfig-noingress", "", http.StatusOK)
	d.agent("POST", f.path(clusterPat+"/actions/complete-installation"), `{"is_success":true}`, http.StatusAccepted)
	if cl = d.getCluster(cl.ID); cl.Status != wire.ClusterStatusInstalled {
		d.fatalf("cluster %s (%s), want installed", cl.Status, cl.StatusInfo)
	}
	d.user("GET", f.path(clusterPat+"/credentials"), "", http.StatusOK)
	d.user("GET", api.Base+"/events?cluster_id="+cl.ID, "", http.StatusOK)
	d.user("GET", api.Base+"/clusters", "", http.StatusOK)

	// A host that comes late is refused.
	late := &cHost{id: uuid.NewString(), name: "late"}
	r := d.h.agent(d.t, "POST", f.path(infraEnvPat+"/hosts"), fmt.Sprintf(`{"host_id":%q}`, late.id))
	if r.status != http.StatusConflict {
		d.fatalf("late registration = %d %s, want 409", r.status, r.body)
	}
}

// cancelSingleNode cancels a single-node cluster while it prepares: its
// host gets the logs and stop steps.
func (d *conformanceDriver) cancelSingleNode() {
	d.t.Helper()
	f := d.h.newReadySNO(d.t)
	hh := &cHost{id: f.hostID, name: "sno"}
	d.user("POST", f.path(clusterPat+"/actions/install"), "", http.StatusAccepted)
	d.prepare(f.infraEnvID, hh)
	d.awaitInstall(f.infraEnvID, f.clusterID, hh)
	d.user("POST", f.path(clusterPat+"/actions/cancel"), "", http.StatusAccepted)
	d.checkIn(f.infraEnvID, hh, 0) // cancelled: logs-gather, stop-installation
	d.agent("PUT", f.path(hostPat+"/logs-progress"), `{"logs_state":"requested"}`, http.StatusNoContent)
}

// dhcpVIPs registers a host of a cluster whose VIPs come from DHCP: it gets
// the lease step.
func (d *conformanceDriver) dhcpVIPs() {
	d.t.Helper()
	c := d.h.client
	yes := true
	cp := int64(3)
	cl, err := c.RegisterCluster(d.ctx, wire.ClusterCreateParams{
		Name: "dhcp", OpenshiftVersion: "4.18", OCPReleaseImage: conformanceRelease, PullSecret: pullSecret,
		BaseDNSDomain: "example.com", ControlPlaneCount: &cp, VIPDHCPAllocation: &yes,
		MachineNetworks: []*wire.MachineNetwork{{CIDR: "192.168.111.0/24"}},
	})
	if err != nil {
		d.fatalf("RegisterCluster: %v", err)
	}
	ie, err := c.RegisterInfraEnv(d.ctx, wire.InfraEnvCreateParams{Name: "dhcp", PullSecret: pullSecret, ClusterID: &cl.ID})
	if err != nil {
		d.fatalf("RegisterInfraEnv: %v", err)
	}
	hh := &cHost{id: uuid.NewString(), name: "dhcp-0", inv: conformanceInventory(1)}
	if _, err := c.RegisterHost(d.ctx, ie.ID, wire.HostCreateParams{HostID: hh.id}); err != nil {
		d.fatalf("RegisterHost: %v", err)
	}
	d.checkIn(ie.ID, hh, 0)
	d.reply(ie.ID, hh, wire.StepTypeInventory, "inventory-00000001", hh.inv)
	d.checkIn(ie.ID, hh, 0)
}

// addHostsToInstalled adds a host to an installed cluster as ABI's
// add-nodes workflow does: agent-import-cluster imports the cluster and
// patches its worker ignition endpoint and networking, the host
// registers into an infra-env bound to it, becomes known, agent-add-node
// installs it, and its installer reports up to Rebooting, which leaves it
// added-to-existing-cluster.
func (d *conformanceDriver) addHostsToInstalled() {
	d.t.Helper()
	c := d.h.client
	name, apiName, ocpID := "ignored", "api.day2.example.com", "1b5ba46b-7e56-47b1-a326-a9eebddfb38c"
	cl, err := c.ImportCluster(d.ctx, wire.ImportClusterParams{Name: &name, APIVipDnsname: &apiName, OpenshiftClusterID: &ocpID})
	if err != nil {
		d.fatalf("ImportCluster: %v", err)
	}
	if cl.Kind != wire.ClusterKindAddHostsCluster || cl.Status != wire.ClusterStatusAddingHosts || cl.Name != "day2" {
		d.fatalf("imported cluster: kind %s status %s name %q, want AddHostsCluster adding-hosts day2", cl.Kind, cl.Status, cl.Name)
	}
	now := time.Now()
	ca, _, _, err := pki.NewServer("machine-config-server-ca", nil, []string{"api-int.day2.example.com"}, now, now.Add(time.Hour))
	if err != nil {
		d.fatalf("pki.NewServer: %v", err)
	}
	caB64 := base64.StdEncoding.EncodeToString(pki.CertPEM(ca.Cert))
	f := fixture{clusterID: cl.ID}
	d.user("PATCH", f.path(clusterPat), fmt.Sprintf(`{"user_managed_networking":false,"ignition_endpoint":{"url":"https://api-int.day2.example.com:22623/config/worker","ca_certificate":%q}}`, caB64), http.StatusCreated)
	ie, err := c.RegisterInfraEnv(d.ctx, wire.InfraEnvCreateParams{Name: "day2", PullSecret: pullSecret, ClusterID: &cl.ID})
	if err != nil {
		d.fatalf("RegisterInfraEnv: %v", err)
	}
	f.infraEnvID = ie.ID
	hh := &cHost{id: uuid.NewString(), name: "conform-day2", inv: conformanceInventory(7)}
	hh.inv.Hostname = hh.name
	if _, err := c.RegisterHost(d.ctx, ie.ID, wire.HostCreateParams{HostID: hh.id, DiscoveryAgentVersion: agentImage}); err != nil {
		d.fatalf("RegisterHost: %v", err)
	}
	f.hostID = hh.id
	d.checkIn(ie.ID, hh, 0) // discovering: inventory
	d.reply(ie.ID, hh, wire.StepTypeInventory, "inventory-00000001", hh.inv)
	d.checkIn(ie.ID, hh, 0)
	if err := assistedtest.AnswerChecks(d.ctx, c, c, ie.ID, d.getCluster(cl.ID)); err != nil {
		d.fatalf("AnswerChecks: %v", err)
	}
	d.checkIn(ie.ID, hh, 0)
	host, err := c.GetHost(d.ctx, ie.ID, hh.id)
	if err != nil {
		d.fatalf("GetHost: %v", err)
	}
	if host.Kind != wire.HostKindAddToExistingClusterHost || host.Status != wire.HostStatusKnown {
		d.fatalf("day-2 host: kind %s status %s (%s), want AddToExistingClusterHost known", host.Kind, host.Status, host.StatusInfo)
	}
	d.user("POST", f.path(hostPat+"/actions/install"), "", http.StatusAccepted)
	d.user("POST", f.path(hostPat+"/actions/install"), "", http.StatusConflict) // installing already
	steps := d.checkIn(ie.ID, hh, 0)
	if !slices.ContainsFunc(steps.Instructions, func(st *wire.Step) bool { return st.StepType == wire.StepTypeInstall }) {
		d.fatalf("installing day-2 host: no install step")
	}
	d.day2Install = d.installs[hh.name]
	delete(d.installs, hh.name)
	d.agent("GET", api.Base+"/infra-env/"+ie.ID+"/hosts/"+hh.id+"/downloads/ignition", "", http.StatusOK)
	host, err = c.GetHost(d.ctx, ie.ID, hh.id)
	if err != nil {
		d.fatalf("GetHost: %v", err)
	}
	for _, st := range host.ProgressStages {
		if err := c.UpdateHostInstallProgress(d.ctx, ie.ID, hh.id, wire.HostProgress{CurrentStage: st}); err != nil {
			d.fatalf("progress %s for %s: %v", st, hh.name, err)
		}
	}
	if host, err = c.GetHost(d.ctx, ie.ID, hh.id); err != nil || host.Status != wire.HostStatusAddedToExistingCluster {
		d.fatalf("day-2 host after its stages %v: %v %v, want added-to-existing-cluster", host.ProgressStages, err, host)
	}
	d.user("GET", f.path(clusterPat), "", http.StatusOK)
	d.user("GET", api.Base+"/events?cluster_id="+cl.ID, "", http.StatusOK)
}

// prepare answers a preparing host's checks: its disk is fast and every
// image it was asked about was pulled.
func (d *conformanceDriver) prepare(infraEnvID string, hh *cHost) {
	d.t.Helper()
	steps := d.checkIn(infraEnvID, hh, 0) // preparing-for-installation
	for _, st := range steps.Instructions {
		switch st.StepType {
		case wire.StepTypeInstallationDiskSpeedCheck:
			var req wire.DiskSpeedCheckRequest
			_ = json.Unmarshal([]byte(st.Args[0]), &req)
			d.reply(infraEnvID, hh, st.StepType, st.StepID, wire.DiskSpeedCheckResponse{Path: req.Path, IOSyncDuration: 2})
		case wire.StepTypeContainerImageAvailability:
			var req wire.ContainerImageAvailabilityRequest
			_ = json.Unmarshal([]byte(st.Args[0]), &req)
			resp := wire.ContainerImageAvailabilityResponse{}
			for _, img := range req.Images {
				resp.Images = append(resp.Images, &wire.ContainerImageAvailability{Name: img, Result: wire.ContainerImageAvailabilityResultSuccess, SizeBytes: 4e6, Time: 2, DownloadRate: 2})
			}
			d.reply(infraEnvID, hh, st.StepType, st.StepID, resp)
		}
	}
}

// awaitInstall waits for the host's install step: it comes once the
// preparation has generated the install files and the cluster installs.
func (d *conformanceDriver) awaitInstall(infraEnvID, clusterID string, hh *cHost) {
	d.t.Helper()
	steps := d.checkIn(infraEnvID, hh, 30*time.Second)
	if !slices.ContainsFunc(steps.Instructions, func(st *wire.Step) bool { return st.StepType == wire.StepTypeInstall }) {
		cur := d.getCluster(clusterID)
		d.fatalf("%s: no install step (cluster %s: %s)", hh.name, cur.Status, cur.StatusInfo)
	}
}

func (d *conformanceDriver) getCluster(id string) *wire.Cluster {
	d.t.Helper()
	c, err := d.h.client.GetCluster(d.ctx, id)
	if err != nil {
		d.fatalf("GetCluster: %v", err)
	}
	return c
}

// agentImage is the agent version an ABI host sends.
const agentImage = "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:5e1ad0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0"

// sortedKeys is for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

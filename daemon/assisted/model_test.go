package assisted

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// storeDocsBefore are the rows of a cluster preparing its installation as
// the build before the typed model wrote them (its host documents carry
// every check result as JSON text): three masters, the first of which
// answered its preparation checks and a free-network-addresses scan.
const storeDocsBefore = "testdata/store-docs-before-typed-model.json"

type storeDocs struct {
	Cluster      json.RawMessage   `json:"cluster"`
	InfraEnv     json.RawMessage   `json:"infra_env"`
	Hosts        []json.RawMessage `json:"hosts"`
	Connectivity map[string]string `json:"connectivity"`
}

// putDocs writes the rows of docs into st, as a store of that build holds
// them.
func putDocs(t *testing.T, e *env, docs storeDocs) {
	t.Helper()
	err := e.st.Update(e.ctx, func(tx *store.Tx) error {
		var cd clusterDoc
		if err := json.Unmarshal(docs.Cluster, &cd); err != nil {
			return err
		}
		c := cd.Cluster
		if err := tx.PutCluster(store.Cluster{ID: c.ID, Status: string(c.Status), StatusInfo: c.StatusInfo, StatusUpdatedAt: c.StatusUpdatedAt.Time(), Doc: docs.Cluster}); err != nil {
			return err
		}
		var ied infraEnvDoc
		if err := json.Unmarshal(docs.InfraEnv, &ied); err != nil {
			return err
		}
		if err := tx.PutInfraEnv(store.InfraEnv{ID: ied.InfraEnv.ID, ClusterID: ied.InfraEnv.ClusterID, Doc: docs.InfraEnv}); err != nil {
			return err
		}
		for _, doc := range docs.Hosts {
			var h wire.Host
			if err := json.Unmarshal(doc, &h); err != nil {
				return err
			}
			row, err := hostRow(&h)
			if err != nil {
				return err
			}
			row.Doc = doc
			if err := tx.PutHost(row); err != nil {
				return err
			}
			if err := tx.PutHostConnectivity(h.InfraEnvID, h.ID, docs.Connectivity[h.ID]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("write the earlier build's rows: %v", err)
	}
}

// TestLoadsStoreOfEarlierBuild: a store the build before the typed model
// wrote loads. The check results, validations and majority groups its
// documents carry as text come back as values that the validations read
// (the checks' validations pass on them: they would pend or fail on
// nothing), the API shows the same texts, and the rows this build writes
// have the documents' shape.
func TestLoadsStoreOfEarlierBuild(t *testing.T) {
	b, err := os.ReadFile(storeDocsBefore)
	if err != nil {
		t.Fatal(err)
	}
	var docs storeDocs
	if err := json.Unmarshal(b, &docs); err != nil {
		t.Fatalf("%s: %v", storeDocsBefore, err)
	}
	// The preparation resumes on start: it is held, so that the statuses
	// stay those of the documents.
	installer := heldInstaller(t)
	e := newEnv(t, func(c *Config) { c.Installer = installer })
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	putDocs(t, e, docs)
	e.start()

	var cd clusterDoc
	if err := json.Unmarshal(docs.Cluster, &cd); err != nil {
		t.Fatal(err)
	}
	before := cd.Cluster
	c := e.getCluster(before.ID)
	if c.ConnectivityMajorityGroups != before.ConnectivityMajorityGroups || c.ConnectivityMajorityGroups == "" {
		t.Errorf("connectivity_majority_groups %q, want the stored %q", c.ConnectivityMajorityGroups, before.ConnectivityMajorityGroups)
	}
	if c.ValidationsInfo != before.ValidationsInfo {
		t.Errorf("cluster validations_info\n%s\nwant the stored\n%s", c.ValidationsInfo, before.ValidationsInfo)
	}
	measured := 0
	for _, doc := range docs.Hosts {
		var old wire.Host
		if err := json.Unmarshal(doc, &old); err != nil {
			t.Fatal(err)
		}
		got := e.host(old.InfraEnvID, old.ID)
		old.Connectivity = docs.Connectivity[old.ID] // from its own row
		texts := func(h *wire.Host) []string {
			return []string{h.Inventory, h.ValidationsInfo, h.FreeAddresses, h.NTPSources, h.DomainNameResolutions, h.ImagesStatus, h.DisksInfo, h.Connectivity}
		}
		if diff := cmp.Diff(texts(&old), texts(got)); diff != "" {
			t.Errorf("host %s: the API shows other texts than the stored ones (-stored +shown):\n%s", old.ID, diff)
		}
		results := resultsByID(t, got.ValidationsInfo)
		for _, id := range []wire.HostValidationID{wire.HostValidationIDNTPSynced, wire.HostValidationIDBelongsToMajorityGroup,
			wire.HostValidationIDDNSWildcardNotConfigured, wire.HostValidationIDContainerImagesAvailable, wire.HostValidationIDSufficientInstallationDiskSpeed} {
			if r := results[string(id)]; r.Status != wire.ValidationSuccess {
				t.Errorf("host %s: %s %s %q, want success", old.ID, id, r.Status, r.Message)
			}
		}
		if results[string(wire.HostValidationIDSufficientInstallationDiskSpeed)].Message == "Speed of installation disk is sufficient" {
			measured++
		}

		// What is loaded is values, and written again as the same
		// document.
		e.s.mu.RLock()
		h := e.s.hosts[hostKey{old.InfraEnvID, old.ID}]
		ntp, domains, inv := h.checks.NTPSources, h.checks.Domains, h.inv
		row, err := hostRow(h.view())
		e.s.mu.RUnlock()
		if !ntp.Set || ntp.Unreadable || len(ntp.Value) == 0 || !domains.Set || len(domains.Value.Resolutions) == 0 || inv == nil {
			t.Errorf("host %s loaded without its values: ntp %+v, domains %+v, inventory %v", old.ID, ntp, domains, inv != nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		var want, again map[string]any
		if err := json.Unmarshal(doc, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(row.Doc, &again); err != nil {
			t.Fatal(err)
		}
		// Times never set were written as 0001-01-01 by that build;
		// they are left out now (issue #18), as they are on the wire.
		for k, v := range want {
			if str, ok := v.(string); ok && strings.HasPrefix(str, "0001-01-01T00:00:00") {
				delete(want, k)
			}
		}
		if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("host %s written again differs from the stored document (-stored +written):\n%s", old.ID, diff)
		}
	}
	if measured != 1 {
		t.Errorf("%d hosts with a measured installation disk, want the one the documents have", measured)
	}
}

package gather

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodezero/nodezero/store"
)

// putDoc marshals a document for a store row.
func putDoc(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStoreDump reads a store the test keeps open for writing, as a
// running service does: the dump has its rows, the live file is not
// written, and the pull secret is redacted.
func TestStoreDump(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	st, err := store.Open(ctx, filepath.Join(dataDir, DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const auth = "c3RvcmUtdXNlcjpzdG9yZS1wYXNzd29yZA=="
	ps := `{"auths":{"quay.io":{"auth":"` + auth + `"}}}`
	vi := `{"hardware":[{"id":"has-min-cpu-cores","status":"failure","message":"The host has 2 CPU cores, 4 required"}]}`
	err = st.Update(ctx, func(tx *store.Tx) error {
		if err := tx.PutCluster(store.Cluster{ID: "c1", Status: "insufficient", StatusInfo: "Cluster is not ready",
			Doc: putDoc(t, map[string]any{"cluster": map[string]any{"name": "ocp", "validations_info": vi}, "pull_secret": ps})}); err != nil {
			return err
		}
		if err := tx.PutInfraEnv(store.InfraEnv{ID: "ie1", ClusterID: "c1", Doc: putDoc(t, map[string]any{"pull_secret": ps})}); err != nil {
			return err
		}
		if err := tx.PutHost(store.Host{ID: "h1", InfraEnvID: "ie1", ClusterID: "c1", Status: "insufficient", StatusInfo: "Host cannot be installed",
			Doc: putDoc(t, map[string]any{"requested_hostname": "master-0", "role": "master", "validations_info": vi, "inventory": `{"hostname":"m0"}`})}); err != nil {
			return err
		}
		if err := tx.PutClusterFile("c1", "kubeadmin-password", []byte("kubeadmin-PASSWORD-xyz")); err != nil {
			return err
		}
		_, err := tx.AddEvent(store.Event{Name: "host_registered", Severity: "info", Message: "Host master-0: registered", ClusterID: "c1", HostID: "h1"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	before := statAll(t, dataDir)
	files, _ := gatherTo(t, Options{Root: t.TempDir(), DataDir: dataDir, LookPath: noTools})
	if after := statAll(t, dataDir); before != after {
		t.Errorf("the data directory changed:\nbefore %s\nafter  %s", before, after)
	}
	var hosts []struct {
		ID  string
		Doc struct {
			ValidationsInfo map[string][]struct{ ID, Status string } `json:"validations_info"`
			Inventory       struct{ Hostname string }
		}
	}
	if err := json.Unmarshal([]byte(files["store/hosts.json"]), &hosts); err != nil {
		t.Fatalf("hosts.json: %v\n%s", err, files["store/hosts.json"])
	}
	if len(hosts) != 1 || hosts[0].ID != "h1" || hosts[0].Doc.ValidationsInfo["hardware"][0].Status != "failure" || hosts[0].Doc.Inventory.Hostname != "m0" {
		t.Errorf("hosts.json = %+v, want h1 with validations_info and inventory parsed", hosts)
	}
	for _, f := range []string{"store/clusters.json", "store/infra-envs.json", "store/events.json", "store/install-files.json", "store/summary.txt"} {
		if files[f] == "" {
			t.Errorf("%s is missing", f)
		}
	}
	if !strings.Contains(files["store/install-files.json"], `"kubeadmin-password"`) {
		t.Errorf("install-files.json = %s", files["store/install-files.json"])
	}
	if !strings.Contains(files["store/summary.txt"], "failure has-min-cpu-cores: The host has 2 CPU cores") {
		t.Errorf("summary.txt = %s", files["store/summary.txt"])
	}
	if !strings.Contains(files["store/clusters.json"], `\"auth\":\"<redacted>\"`) {
		t.Errorf("clusters.json does not keep the pull secret's shape:\n%s", files["store/clusters.json"])
	}
	for name, content := range files {
		for _, s := range []string{auth, "store-password", "kubeadmin-PASSWORD-xyz"} {
			if strings.Contains(content, s) {
				t.Errorf("%s holds %q", name, s)
			}
		}
	}
}

// statAll describes every file of dir: name, size, time.
func statAll(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil && !d.IsDir() {
			fmt.Fprintf(&b, "%s %d %s; ", d.Name(), fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
		}
		return nil
	})
	return b.String()
}

// TestSnapshotWhileWriting copies the store while a writer rewrites ten
// large host rows in each transaction, so that SQLite checkpoints and
// restarts its WAL every dozen transactions: every snapshot that says it
// is consistent opens and holds one whole transaction (all ten rows of the
// same generation), never older than an earlier snapshot's. The rows are
// rewritten, not added, so the files stay a few MiB.
func TestSnapshotWhileWriting(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	db := filepath.Join(dataDir, DBFile)
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const rows = 10
	write := func(gen int) error {
		return st.Update(ctx, func(tx *store.Tx) error {
			if gen == 0 {
				if err := tx.PutInfraEnv(store.InfraEnv{ID: "ie", Doc: []byte("{}")}); err != nil {
					return err
				}
			}
			for i := range rows {
				// Every page of the row changes: SQLite skips writing the
				// overflow pages of an update that leaves them as they were.
				pad := strings.Repeat(string(rune('a'+gen%26)), 32<<10)
				doc := fmt.Sprintf(`{"gen":%d,"pad":%q}`, gen, pad)
				if err := tx.PutHost(store.Host{ID: fmt.Sprint(i), InfraEnvID: "ie", Status: "known", StatusInfo: fmt.Sprint(gen), Doc: []byte(doc)}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := write(0); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	// Stop the writer however the test ends, before the store closes.
	stopWriter := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopWriter()
	go func() {
		defer wg.Done()
		for gen := 1; gen < 5000; gen++ {
			select {
			case <-stop:
				return
			default:
			}
			if werr = write(gen); werr != nil {
				return
			}
		}
	}()
	last, consistentSnaps := 0, 0
	salts := map[string]bool{}
	// Snapshot until the WAL has restarted at least once under the
	// snapshots and five of them were consistent (how many that takes
	// depends on the machine's speed; bounded all the same).
	tries := 0
	for i := 0; i < 400 && (len(salts) < 2 || consistentSnaps < 5); i++ {
		tries++
		dir := filepath.Join(t.TempDir(), "snap")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		snap, consistent, err := snapshot(db, dir)
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		h, _ := walHeader(db + "-wal")
		salts[string(h)] = true
		if !consistent {
			// The writer restarted the WAL during every try: snapshot
			// says so, and the gather's manifest with it.
			os.RemoveAll(dir)
			continue
		}
		consistentSnaps++
		s, err := store.Open(ctx, snap, store.Options{})
		if err != nil {
			t.Fatalf("open snapshot %d: %v", i, err)
		}
		gens := map[string]bool{}
		err = s.View(ctx, func(tx *store.Tx) error {
			hs, err := tx.Hosts(store.HostFilter{})
			for _, h := range hs {
				var d struct{ Gen int }
				if jerr := json.Unmarshal(h.Doc, &d); jerr != nil || fmt.Sprint(d.Gen) != h.StatusInfo {
					return fmt.Errorf("host %s: doc gen %d, status_info %s: %v", h.ID, d.Gen, h.StatusInfo, jerr)
				}
				gens[h.StatusInfo] = true
			}
			if err == nil && len(hs) != rows {
				err = fmt.Errorf("%d hosts, want %d", len(hs), rows)
			}
			return err
		})
		s.Close()
		os.RemoveAll(dir)
		if err != nil {
			t.Fatalf("read snapshot %d: %v", i, err)
		}
		if len(gens) != 1 {
			t.Fatalf("snapshot %d: rows of generations %v: a transaction split", i, gens)
		}
		var gen int
		for g := range gens {
			fmt.Sscan(g, &gen)
		}
		if gen < last {
			t.Errorf("snapshot %d: generation %d after %d", i, gen, last)
		}
		last = gen
	}
	stopWriter()
	if werr != nil {
		t.Fatal(werr)
	}
	if consistentSnaps < 5 || last == 0 {
		t.Errorf("%d of %d snapshots were consistent, the last at generation %d", consistentSnaps, tries, last)
	}
	if len(salts) < 2 {
		t.Errorf("the WAL never restarted during the test (%d headers seen): nothing was proven", len(salts))
	}
}

// TestSnapshotRetriesWhenTheWALRestarts makes the WAL restart between the
// copies of the database file and of the WAL, deterministically: the
// first copy pairs a database file without the old WAL's transactions
// with a WAL that no longer has them, so snapshot must try again, and the
// snapshot it returns holds every event, gap-free.
func TestSnapshotRetriesWhenTheWALRestarts(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), DBFile)
	st, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	written := 0
	add := func() {
		t.Helper()
		err := st.Update(ctx, func(tx *store.Tx) error {
			for range 10 {
				if _, err := tx.AddEvent(store.Event{Name: "e", Severity: "info", Props: []byte(`"` + strings.Repeat("p", 32<<10) + `"`)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		written += 10
	}
	add()
	tries := 0
	afterDBCopy = func() {
		if tries++; tries > 1 {
			return
		}
		// Write until SQLite checkpoints (every 4 MiB of WAL) and the next
		// transaction restarts the WAL with a new header.
		first, _ := walHeader(db + "-wal")
		for i := 0; i < 100; i++ {
			add()
			if h, _ := walHeader(db + "-wal"); !bytes.Equal(h, first) {
				add()
				return
			}
		}
		t.Error("the WAL did not restart after 1,000 events")
	}
	defer func() { afterDBCopy = func() {} }()
	snap, consistent, err := snapshot(db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !consistent || tries < 2 {
		t.Errorf("snapshot: consistent %v after %d tries, want a consistent second try", consistent, tries)
	}
	s, err := store.Open(ctx, snap, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var total int
	var newest []store.Event
	err = s.View(ctx, func(tx *store.Tx) error {
		var err error
		if _, total, err = tx.EventCounts(store.EventFilter{}); err != nil {
			return err
		}
		newest, err = tx.Events(store.EventFilter{Descending: true, Limit: 1})
		return err
	})
	if err != nil {
		t.Fatalf("read the snapshot: %v", err)
	}
	if total != written || len(newest) != 1 || newest[0].Seq != int64(written) {
		t.Errorf("snapshot holds %d events (newest %d), want all %d", total, len(newest), written)
	}
}

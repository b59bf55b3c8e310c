package gather

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/store"
)

// DBFile is the store's file in node zero's data directory.
const DBFile = "nodezero.db"

// The store is read from a snapshot, never from the service's own file:
// store.Open creates a missing file, applies migrations and opens a
// writer, none of which a support tool may do to a running node zero (or
// to the file of a newer binary). The snapshot is a copy of the database
// file and its write-ahead log, taken with plain reads while the service
// runs, and opened where nothing else looks.
//
// The copy is consistent when the WAL's header is the same before the
// database file is read and after the WAL is: SQLite writes the database
// file only when it checkpoints, and it copies there only pages that are
// also in the WAL, which stays in place (same header, only appended to)
// until a later writer restarts it with a new salt. So a page the copy of
// the database file caught half written is whole in the copy of the WAL,
// which SQLite's recovery prefers; a frame caught half appended at the
// end fails its checksum and is dropped with its uncommitted transaction.

// snapshotTries bounds the copies tried while the WAL keeps restarting
// under a busy writer; each retry waits a little longer.
const snapshotTries = 50

// walHeaderSize is the WAL file header: magic, version, page size,
// checkpoint sequence, salts and checksum.
const walHeaderSize = 32

// snapshot copies db and db-wal into dir. consistent is false when the
// WAL restarted during every try; the last copy is kept then, and SQLite's
// recovery makes of it what it can (the caller says so).
func snapshot(db, dir string) (copyPath string, consistent bool, err error) {
	copyPath = filepath.Join(dir, DBFile)
	for try := 0; try < snapshotTries; try++ {
		before, err := walHeader(db + "-wal")
		if err != nil {
			return "", false, err
		}
		if err := copyFile(db, copyPath); err != nil {
			return "", false, err
		}
		afterDBCopy()
		if err := copyFile(db+"-wal", copyPath+"-wal"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", false, err
		}
		after, err := walHeader(db + "-wal")
		if err != nil {
			return "", false, err
		}
		if bytes.Equal(before, after) {
			return copyPath, true, nil
		}
		time.Sleep(time.Duration(try%10) * time.Millisecond)
	}
	return copyPath, false, nil
}

// afterDBCopy runs between the copies of the database file and of its
// WAL: tests make the WAL restart there.
var afterDBCopy = func() {}

// walHeader reads the WAL's header; nil when there is no WAL (the service
// closed the database cleanly).
func walHeader(p string) ([]byte, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := make([]byte, walHeaderSize)
	n, err := io.ReadFull(f, h)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return h[:n], nil
}

// copyFile copies from to to (0600), from opened read-only.
func copyFile(from, to string) error {
	os.Remove(to) // a WAL of an earlier attempt must not outlive its file
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// dump is what the bundle shows of the store.
type dump struct {
	clusters, infraEnvs, hosts, events []any
	files                              []any
	summary                            string
}

// storeSection dumps node zero's store: clusters, infra-envs, hosts (with
// validations_info and inventory parsed), events, and the names of the
// install files and custom manifests (their content holds the kubeadmin
// password and kubeconfigs, and stays out).
func (g *gatherer) storeSection(ctx context.Context) {
	const section = "store"
	db := filepath.Join(g.o.DataDir, DBFile)
	if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
		g.b.note(section+"/", StatusSkipped, "no %s: not node zero, or its service never started", db)
		return
	} else if err != nil {
		g.b.note(section+"/", StatusFailed, "%v", err)
		return
	}
	tmp, err := os.MkdirTemp(g.o.TempDir, "nodezero-gather-store-")
	if err != nil {
		g.b.note(section+"/", StatusFailed, "snapshot: %v", err)
		return
	}
	defer os.RemoveAll(tmp)
	snap, consistent, err := snapshot(db, tmp)
	if err != nil {
		g.b.note(section+"/", StatusFailed, "snapshot of %s: %v", db, err)
		return
	}
	if !consistent {
		g.b.note(section+"/", StatusOK, "the WAL restarted during every copy of %s: the dump may miss the last writes", db)
	}
	d, err := readDump(ctx, snap, g.red.Learn)
	if err != nil {
		g.b.note(section+"/", StatusFailed, "read the snapshot of %s: %v", db, err)
		return
	}
	for _, e := range []struct {
		name string
		rows []any
	}{
		{"clusters.json", d.clusters}, {"infra-envs.json", d.infraEnvs}, {"hosts.json", d.hosts},
		{"events.json", d.events}, {"install-files.json", d.files},
	} {
		v, n := g.red.walk(e.rows)
		b, err := marshal(v, "  ")
		if err != nil {
			g.b.note(section+"/"+e.name, StatusFailed, "%v", err)
			continue
		}
		g.b.add(section+"/"+e.name, append(b, '\n'), n, fmt.Sprintf("%d rows", len(e.rows)))
	}
	g.b.add(section+"/summary.txt", []byte(d.summary), 0, "")
}

// readDump reads everything in one read transaction.
// Secret install files (kubeadmin-password) are passed to learn.
func readDump(ctx context.Context, path string, learn func(...string)) (*dump, error) {
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	d := &dump{}
	var sum strings.Builder
	err = st.View(ctx, func(tx *store.Tx) error {
		clusters, err := tx.Clusters()
		if err != nil {
			return err
		}
		hosts, err := tx.Hosts(store.HostFilter{})
		if err != nil {
			return err
		}
		ies, err := tx.InfraEnvs()
		if err != nil {
			return err
		}
		events, err := tx.Events(store.EventFilter{})
		if err != nil {
			return err
		}
		for _, c := range clusters {
			doc := parseDoc(c.Doc)
			if inner, ok := doc.(object); ok {
				if cl, ok := inner.get("cluster").(object); ok {
					expand(cl, "validations_info")
				}
			}
			d.clusters = append(d.clusters, object{
				{"id", c.ID}, {"status", c.Status}, {"status_info", c.StatusInfo},
				{"status_updated_at", stamp(c.StatusUpdatedAt)}, {"created_at", stamp(c.CreatedAt)},
				{"updated_at", stamp(c.UpdatedAt)}, {"doc", doc},
			})
			files, err := installFiles(tx, c.ID, learn)
			if err != nil {
				return err
			}
			d.files = append(d.files, files)
			summarizeCluster(&sum, c, doc)
			for _, h := range hosts {
				if h.ClusterID == c.ID {
					summarizeHost(&sum, h)
				}
			}
		}
		for _, e := range ies {
			d.infraEnvs = append(d.infraEnvs, object{
				{"id", e.ID}, {"cluster_id", e.ClusterID}, {"created_at", stamp(e.CreatedAt)},
				{"updated_at", stamp(e.UpdatedAt)}, {"doc", parseDoc(e.Doc)},
			})
		}
		unbound := false
		for _, h := range hosts {
			doc := parseDoc(h.Doc)
			if o, ok := doc.(object); ok {
				expand(o, "validations_info")
				expand(o, "inventory")
			}
			d.hosts = append(d.hosts, object{
				{"id", h.ID}, {"infra_env_id", h.InfraEnvID}, {"cluster_id", h.ClusterID},
				{"status", h.Status}, {"status_info", h.StatusInfo},
				{"status_updated_at", stamp(h.StatusUpdatedAt)}, {"checked_in_at", stamp(h.CheckedInAt)},
				{"created_at", stamp(h.CreatedAt)}, {"updated_at", stamp(h.UpdatedAt)}, {"doc", doc},
			})
			if h.ClusterID == "" {
				if !unbound {
					sum.WriteString("hosts bound to no cluster:\n")
					unbound = true
				}
				summarizeHost(&sum, h)
			}
		}
		for _, e := range events {
			d.events = append(d.events, object{
				{"seq", json.Number(fmt.Sprint(e.Seq))}, {"time", stamp(e.Time)}, {"name", e.Name},
				{"severity", e.Severity}, {"category", e.Category}, {"message", e.Message},
				{"cluster_id", e.ClusterID}, {"host_id", e.HostID}, {"infra_env_id", e.InfraEnvID},
				{"request_id", e.RequestID}, {"props", parseDoc(e.Props)},
			})
		}
		fmt.Fprintf(&sum, "\n%d clusters, %d infra-envs, %d hosts, %d events\n", len(clusters), len(ies), len(hosts), len(events))
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.summary = sum.String()
	return d, nil
}

// installFiles lists a cluster's install files and custom manifests by
// name and size; the content of a secret one goes to learn, so that it is
// redacted wherever else it shows.
func installFiles(tx *store.Tx, clusterID string, learn func(...string)) (object, error) {
	names, err := tx.ClusterFileNames(clusterID)
	if err != nil {
		return nil, err
	}
	files := []any{}
	for _, n := range names {
		b, err := tx.ClusterFile(clusterID, n)
		if err != nil {
			return nil, err
		}
		if SecretName(n) {
			learn(string(b))
		}
		files = append(files, object{{"name", n}, {"size", json.Number(fmt.Sprint(len(b)))}})
	}
	ms, err := tx.Manifests(clusterID)
	if err != nil {
		return nil, err
	}
	manifests := []any{}
	for _, m := range ms {
		manifests = append(manifests, object{
			{"folder", m.Folder}, {"file_name", m.FileName}, {"source", m.Source}, {"size", json.Number(fmt.Sprint(m.Size))},
		})
	}
	return object{
		{"cluster_id", clusterID},
		{"note", "names and sizes only: the content holds the kubeadmin password, kubeconfigs and the user's manifests"},
		{"install_files", files}, {"manifests", manifests},
	}, nil
}

// parseDoc parses a stored JSON document; one that does not parse is kept
// as a string (and still goes through the Text pass).
func parseDoc(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	v, err := parseJSON(b)
	if err != nil {
		return string(b)
	}
	return v
}

// expand replaces a field holding a JSON string (validations_info,
// inventory) by the JSON itself, so the dump reads as one document.
func expand(o object, key string) {
	s := o.str(key)
	if s == "" {
		return
	}
	if v, err := parseJSON([]byte(s)); err == nil {
		o.set(key, v)
	}
}

func stamp(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// summarizeCluster and summarizeHost write the lines ABI's agent-gather
// takes from PostgreSQL (id, status, status_info, validations_info), with
// only the validations that do not pass.
func summarizeCluster(w *strings.Builder, c store.Cluster, doc any) {
	name := ""
	var info any
	if o, ok := doc.(object); ok {
		if cl, ok := o.get("cluster").(object); ok {
			name, info = cl.str("name"), cl.get("validations_info")
		}
	}
	fmt.Fprintf(w, "cluster %s %q: %s: %s\n", c.ID, name, c.Status, c.StatusInfo)
	writeFailing(w, "  ", info)
}

func summarizeHost(w *strings.Builder, h store.Host) {
	doc, _ := parseDoc(h.Doc).(object)
	name := doc.str("requested_hostname")
	if inv, err := parseJSON([]byte(doc.str("inventory"))); err == nil && name == "" {
		if o, ok := inv.(object); ok {
			name = o.str("hostname")
		}
	}
	var info any
	if s := doc.str("validations_info"); s != "" {
		info, _ = parseJSON([]byte(s))
	}
	fmt.Fprintf(w, "  host %s %q role %s: %s: %s\n", h.ID, name, doc.str("role"), h.Status, h.StatusInfo)
	writeFailing(w, "    ", info)
}

// writeFailing lists the validations of a validations_info that are not
// "success" (failure, pending, error).
func writeFailing(w *strings.Builder, indent string, info any) {
	groups, ok := info.(object)
	if !ok {
		return
	}
	for _, g := range groups {
		list, _ := g.Value.([]any)
		for _, v := range list {
			o, ok := v.(object)
			if !ok || o.str("status") == "success" || o.str("status") == "disabled" {
				continue
			}
			fmt.Fprintf(w, "%s%s %s: %s\n", indent, o.str("status"), o.str("id"), o.str("message"))
		}
	}
}

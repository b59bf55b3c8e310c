package store

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// baseMigrations returns the embedded migrations as a MapFS a test can add to.
func baseMigrations(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(embedded, "migrations", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded, p)
		if err != nil {
			return err
		}
		m[filepath.Base(p)] = &fstest.MapFile{Data: b}
		return nil
	})
	if err != nil {
		t.Fatalf("reading embedded migrations: %v", err)
	}
	if len(m) == 0 {
		t.Fatal("no embedded migrations")
	}
	return m
}

func with(base fstest.MapFS, name, body string) fstest.MapFS {
	m := fstest.MapFS{}
	for k, v := range base {
		m[k] = v
	}
	m[name] = &fstest.MapFile{Data: []byte(body)}
	return m
}

func openFS(t *testing.T, path string, fsys fs.FS) (*Store, error) {
	t.Helper()
	s, err := open(context.Background(), path, Options{Now: newFakeClock().Now}, fsys)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

type appliedMigration struct {
	Version int
	Name    string
}

func applied(t *testing.T, s *Store) []appliedMigration {
	t.Helper()
	rows, err := s.reader.Query(`SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("query schema_migrations: %v", err)
	}
	defer rows.Close()
	var out []appliedMigration
	for rows.Next() {
		var m appliedMigration
		if err := rows.Scan(&m.Version, &m.Name); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func tableExists(t *testing.T, s *Store, name string) bool {
	t.Helper()
	var n int
	if err := s.reader.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// baseApplied is what schema_migrations holds once every embedded
// migration is applied. Tests that add a migration of their own number it
// from 0900 up, past the embedded ones.
func baseApplied(t *testing.T) []appliedMigration {
	t.Helper()
	ms, err := migrations(baseMigrations(t))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]appliedMigration, len(ms))
	for i, m := range ms {
		out[i] = appliedMigration{m.version, m.file}
	}
	return out
}

func TestOpenFresh(t *testing.T) {
	s := openTest(t, Options{})
	want := []appliedMigration{{1, "0001_init.sql"}, {2, "0002_manifests.sql"}, {3, "0003_cluster_files.sql"}, {4, "0004_host_connectivity.sql"}}
	if diff := cmp.Diff(want, applied(t, s)); diff != "" {
		t.Errorf("schema_migrations (-want +got):\n%s", diff)
	}
	for _, table := range []string{"clusters", "infra_envs", "hosts", "steps", "events", "manifests", "cluster_files", "host_connectivity"} {
		if !tableExists(t, s, table) {
			t.Errorf("table %s missing after fresh open", table)
		}
	}
	pragmas := []struct {
		db   string
		name string
		want string
	}{
		{"writer", "journal_mode", "wal"},
		{"writer", "foreign_keys", "1"},
		{"writer", "synchronous", "2"}, // FULL
		{"writer", "busy_timeout", "5000"},
		{"reader", "foreign_keys", "1"},
		{"reader", "query_only", "1"},
		{"reader", "journal_mode", "wal"},
	}
	for _, p := range pragmas {
		db := s.writer
		if p.db == "reader" {
			db = s.reader
		}
		var got string
		if err := db.QueryRow("PRAGMA " + p.name).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", p.name, err)
		}
		if got != p.want {
			t.Errorf("%s PRAGMA %s = %q, want %q", p.db, p.name, got, p.want)
		}
	}
}

func TestReopenIsNoop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	base := baseMigrations(t)
	s, err := openFS(t, path, base)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.PutCluster(Cluster{ID: "c1", Status: "ready", Doc: []byte(`{}`)}) })
	var appliedAt int64
	s.reader.QueryRow(`SELECT applied_at FROM schema_migrations WHERE version = 1`).Scan(&appliedAt)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = openFS(t, path, base)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if diff := cmp.Diff(baseApplied(t), applied(t, s)); diff != "" {
		t.Errorf("schema_migrations after reopen (-want +got):\n%s", diff)
	}
	var again int64
	s.reader.QueryRow(`SELECT applied_at FROM schema_migrations WHERE version = 1`).Scan(&again)
	if again != appliedAt {
		t.Errorf("applied_at = %d after reopen, want %d (migration re-run)", again, appliedAt)
	}
	mustView(t, s, func(tx *Tx) error {
		c, err := tx.Cluster("c1")
		if err != nil {
			return err
		}
		if c.Status != "ready" {
			t.Errorf("cluster status after reopen = %q, want ready", c.Status)
		}
		return nil
	})
}

func TestLaterMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	base := baseMigrations(t)
	s, err := openFS(t, path, base)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.PutCluster(Cluster{ID: "c1", Status: "ready", Doc: []byte(`{}`)}) })
	s.Close()

	next := with(base, "0900_add_notes.sql", `
		ALTER TABLE clusters ADD COLUMN notes TEXT NOT NULL DEFAULT 'none';
		CREATE TABLE extra (k TEXT PRIMARY KEY);`)
	for i := range 2 { // the second open must not re-apply 0900
		s, err = openFS(t, path, next)
		if err != nil {
			t.Fatalf("open %d with 0900: %v", i, err)
		}
		want := append(baseApplied(t), appliedMigration{900, "0900_add_notes.sql"})
		if diff := cmp.Diff(want, applied(t, s)); diff != "" {
			t.Errorf("open %d: schema_migrations (-want +got):\n%s", i, diff)
		}
		var notes string
		if err := s.reader.QueryRow(`SELECT notes FROM clusters WHERE id = 'c1'`).Scan(&notes); err != nil {
			t.Fatalf("open %d: reading the new column: %v", i, err)
		}
		if notes != "none" {
			t.Errorf("open %d: notes = %q, want none", i, notes)
		}
		if !tableExists(t, s, "extra") {
			t.Errorf("open %d: table extra missing", i)
		}
		s.Close()
	}
}

func TestBrokenMigrationRollsBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	base := baseMigrations(t)
	s, err := openFS(t, path, base)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	broken := with(base, "0900_broken.sql", `
		CREATE TABLE half_done (a TEXT);
		INSERT INTO no_such_table VALUES (1);`)
	_, err = openFS(t, path, broken)
	var merr *MigrationError
	if !errors.As(err, &merr) {
		t.Fatalf("open with a broken migration: err = %v, want a *MigrationError", err)
	}
	if merr.File != "0900_broken.sql" {
		t.Errorf("MigrationError.File = %q, want 0900_broken.sql", merr.File)
	}

	s, err = openFS(t, path, base)
	if err != nil {
		t.Fatalf("reopen after the failure: %v", err)
	}
	if diff := cmp.Diff(baseApplied(t), applied(t, s)); diff != "" {
		t.Errorf("schema_migrations after the failure (-want +got):\n%s", diff)
	}
	if tableExists(t, s, "half_done") {
		t.Error("table half_done exists: the failed migration was not rolled back")
	}
}

func TestBrokenMigrationOnFreshFileKeepsEarlierOnes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	base := baseMigrations(t)
	broken := with(base, "0900_broken.sql", `CREATE TABLE half_done (a TEXT); SELECT * FROM nowhere;`)
	if _, err := openFS(t, path, broken); err == nil {
		t.Fatal("open with a broken migration succeeded")
	}
	s, err := openFS(t, path, base)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(baseApplied(t), applied(t, s)); diff != "" {
		t.Errorf("schema_migrations (-want +got):\n%s", diff)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	base := baseMigrations(t)
	s, err := openFS(t, path, with(base, "0900_more.sql", `CREATE TABLE more (a);`))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := openFS(t, path, base); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("open an older binary on a newer file: err = %v, want ErrNewerSchema", err)
	}
}

func TestMigrationNames(t *testing.T) {
	tests := []struct {
		name     string
		files    []string
		wantFile string // "" = no error
	}{
		{"ok with other files", []string{"0001_a.sql", "README.md", "0010_b.sql"}, ""},
		{"short version", []string{"1_a.sql"}, "1_a.sql"},
		{"upper case", []string{"0001_Init.sql"}, "0001_Init.sql"},
		{"duplicate version", []string{"0001_a.sql", "0001_b.sql"}, "0001_b.sql"},
		{"version zero", []string{"0000_a.sql"}, "0000_a.sql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := fstest.MapFS{}
			for _, f := range tt.files {
				m[f] = &fstest.MapFile{Data: []byte(`SELECT 1;`)}
			}
			_, err := migrations(m)
			var merr *MigrationError
			switch {
			case tt.wantFile == "" && err != nil:
				t.Errorf("migrations(%v) = %v, want no error", tt.files, err)
			case tt.wantFile != "" && !errors.As(err, &merr):
				t.Errorf("migrations(%v) = %v, want a *MigrationError", tt.files, err)
			case tt.wantFile != "" && merr.File != tt.wantFile:
				t.Errorf("migrations(%v) blamed %q, want %q", tt.files, merr.File, tt.wantFile)
			}
		})
	}
}

func TestOpenRejectsBadPath(t *testing.T) {
	for _, p := range []string{"", filepath.Join(t.TempDir(), "a?b.db"), filepath.Join(t.TempDir(), "missing", "x.db")} {
		if s, err := Open(context.Background(), p, Options{}); err == nil {
			s.Close()
			t.Errorf("Open(%q) succeeded, want an error", p)
		}
	}
}

func TestMigrationsApplyInNumericOrder(t *testing.T) {
	fsys := with(with(baseMigrations(t),
		"0910_fill.sql", `INSERT INTO later (v) VALUES ('filled');`),
		"0902_make.sql", `CREATE TABLE later (v TEXT);`)
	s, err := openFS(t, filepath.Join(t.TempDir(), "db"), fsys)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	var v string
	if err := s.reader.QueryRow(`SELECT v FROM later`).Scan(&v); err != nil || v != "filled" {
		t.Errorf("SELECT v FROM later = %q, %v; want filled, nil", v, err)
	}
}

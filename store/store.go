package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Sentinel errors. Errors returned by the store wrap them; test with errors.Is.
var (
	// ErrNotFound is returned when the row asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict is returned when a write breaks a constraint: a reference
	// to a row that does not exist, or a duplicate key. The SQLite error is
	// wrapped alongside it.
	ErrConflict = errors.New("conflict")
	// ErrReadOnly is returned by a write attempted inside View.
	ErrReadOnly = errors.New("write in a read-only transaction")
	// ErrNewerSchema is returned by Open when the file was migrated by a newer
	// binary than this one: running on it could misread or damage it.
	ErrNewerSchema = errors.New("database schema is newer than this binary")
)

//go:embed migrations/*.sql
var embedded embed.FS

// Options tune Open. The zero value is ready to use.
type Options struct {
	// Now is the clock for every timestamp the store sets. nil means time.Now.
	Now func() time.Time
	// BusyTimeout bounds how long a connection waits for a lock held by
	// another process on the same file (SQLite's busy_timeout). Within one
	// process writers queue on the single writer connection instead.
	// 0 means 5s.
	BusyTimeout time.Duration
}

// Store is node zero's state in one SQLite file. It is safe for concurrent use.
//
// It holds two connection pools on the same file: one writer connection
// (every Update begins with BEGIN IMMEDIATE, so a transaction owns the write
// lock from its first statement and never fails to upgrade a read lock with
// SQLITE_BUSY), and several query-only reader connections for View, which in
// WAL mode read a consistent snapshot in parallel with the writer.
type Store struct {
	path   string
	now    func() time.Time
	writer *sql.DB
	reader *sql.DB
}

// Open opens the store at path, creating the file if needed, and applies
// the migrations it has not seen yet. The directory must exist.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	sub, err := fs.Sub(embedded, "migrations")
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return open(ctx, path, opts, sub)
}

// open is Open with the migrations taken from fsys (NNNN_name.sql files at
// its root), so tests can add or break one.
func open(ctx context.Context, path string, opts Options, fsys fs.FS) (*Store, error) {
	if path == "" {
		return nil, errors.New("open store: empty path")
	}
	// The driver cuts the DSN at the first '?' to find its parameters.
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("open store %s: path must not contain '?'", path)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = 5 * time.Second
	}
	// Pragmas from docs/reference/dependency-notes.md §4. synchronous=FULL syncs
	// the WAL at every commit, so a commit that returned survives a power
	// cut, not just a kill -9. cache_size stays at SQLite's 2 MiB per
	// connection: the page cache lives outside Go's heap, in the process's
	// RSS, and node zero reads the hosts back only when it starts (8 MiB
	// listed 1,000 hosts 40 % faster in BenchmarkHostsByCluster, and cost
	// up to 30 MiB over five connections). The driver applies busy_timeout
	// first and query_only last, whatever the order here.
	common := fmt.Sprintf("_pragma=busy_timeout(%d)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=cache_size(-2048)",
		busy.Milliseconds())
	// The store holds the pull secret and the cluster's credentials, so
	// its file is the owner's alone (0600), whatever the umask; SQLite
	// gives the -wal and -shm files the database file's mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	writer, err := sql.Open("sqlite", path+"?"+common+"&_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// One writer connection: concurrent Updates queue here, in Go and under
	// their contexts, rather than spin on the file lock.
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	if err := migrate(ctx, writer, fsys, now); err != nil {
		writer.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}

	// Readers are query_only: a write through View fails in SQLite too, not
	// only in Tx's own check.
	reader, err := sql.Open("sqlite", path+"?"+common+"&_query_only=1")
	if err != nil {
		writer.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	n := max(2, runtime.GOMAXPROCS(0))
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	if err := reader.PingContext(ctx); err != nil {
		reader.Close()
		writer.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return &Store{path: path, now: now, writer: writer, reader: reader}, nil
}

// Close waits for running transactions and closes the file. The last
// connection to close checkpoints the WAL into the main file.
func (s *Store) Close() error {
	rerr := s.reader.Close()
	werr := s.writer.Close()
	if err := errors.Join(rerr, werr); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// Update runs fn in one write transaction and commits it if fn returns nil.
// If fn returns an error (or panics) nothing it wrote is kept, and Update
// returns fn's error unchanged. When Update returns nil the transaction is
// on disk.
//
// Updates run one at a time. fn must not call Update itself (it would wait
// for its own connection forever); it may call View, which sees the state
// before this transaction.
func (s *Store) Update(ctx context.Context, fn func(tx *Tx) error) error {
	return s.run(ctx, s.writer, nil, true, fn)
}

// View runs fn in a read-only transaction: every read in fn sees the same
// snapshot. Writes fail with ErrReadOnly. Views run in parallel with each
// other and with an Update.
func (s *Store) View(ctx context.Context, fn func(tx *Tx) error) error {
	return s.run(ctx, s.reader, &sql.TxOptions{ReadOnly: true}, false, fn)
}

func (s *Store) run(ctx context.Context, db *sql.DB, txo *sql.TxOptions, write bool, fn func(tx *Tx) error) error {
	stx, err := db.BeginTx(ctx, txo)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	// Rollback after Commit is a no-op; this also covers a panic in fn.
	defer stx.Rollback()
	tx := &Tx{ctx: ctx, tx: stx, now: s.now().UTC(), write: write}
	if err := fn(tx); err != nil {
		return err
	}
	if err := stx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// SizeBytes returns the size on disk of the database file and its WAL.
func (s *Store) SizeBytes() (int64, error) {
	var total int64
	for _, p := range []string{s.path, s.path + "-wal"} {
		fi, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) && p != s.path {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("store size: %w", err)
		}
		total += fi.Size()
	}
	return total, nil
}

// wrapErr names the operation and maps the driver's conditions to the
// store's sentinels: no row to ErrNotFound, a constraint failure
// (SQLITE_CONSTRAINT and its extended codes, e.g. 787 for a foreign key) to
// ErrConflict with the SQLite error kept inside.
func wrapErr(op string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", op, ErrNotFound)
	}
	var serr *sqlite.Error
	if errors.As(err, &serr) && serr.Code()&0xff == sqlite3.SQLITE_CONSTRAINT {
		return fmt.Errorf("%s: %w: %w", op, ErrConflict, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

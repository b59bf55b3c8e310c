package api

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
)

// DefaultMaxLogsSize bounds one uploaded log bundle. assisted-service's
// swagger says 250 MB for upfile; a bootstrap host's installer gather can
// exceed it, and the limit is a guard against a runaway client, not a
// quota.
const DefaultMaxLogsSize = 512 << 20

// multipartSlack is what the multipart framing around the file may add to
// the request body (boundaries, part headers, small fields).
const multipartSlack = 1 << 20

// transferTimeout is how long one upload or download may take: the
// server's read and write timeouts are for JSON requests.
const transferTimeout = 15 * time.Minute

// A bundle still being received is a hidden temporary file next to its
// target (atomicfile.Stream); a crash leaves such files behind, and
// newLogStore removes them.

// logStore keeps uploaded log bundles on disk, one directory per cluster:
// <dir>/<cluster_id>/<host_id>.tar.gz and <dir>/<cluster_id>/controller.tar.gz.
// Ids reach it checked by the service (UUIDs), so they are safe as names.
type logStore struct {
	dir string
	max int64
	log *slog.Logger

	mu    sync.Mutex
	locks map[string]*pathLock // one writer per file at a time
}

type pathLock struct {
	mu sync.Mutex
	n  int // holders and waiters
}

func newLogStore(dir string, max int64, log *slog.Logger) *logStore {
	if max <= 0 {
		max = DefaultMaxLogsSize
	}
	st := &logStore{dir: dir, max: max, log: log, locks: map[string]*pathLock{}}
	// Uploads a crash cut off. Best effort: a leftover costs disk, not
	// correctness, and the daemon should start anyway.
	left, _ := filepath.Glob(filepath.Join(dir, "*", ".*"))
	for _, p := range left {
		if err := os.Remove(p); err != nil {
			log.Warn("remove an interrupted log upload", "path", p, "err", err)
		}
	}
	return st
}

func (st *logStore) hostPath(clusterID, hostID string) string {
	return filepath.Join(st.dir, clusterID, hostID+".tar.gz")
}

func (st *logStore) controllerPath(clusterID string) string {
	return filepath.Join(st.dir, clusterID, "controller.tar.gz")
}

// removeCluster deletes every bundle of a cluster.
func (st *logStore) removeCluster(clusterID string) error {
	if err := os.RemoveAll(filepath.Join(st.dir, clusterID)); err != nil {
		return fmt.Errorf("remove logs of cluster %s: %w", clusterID, err)
	}
	return nil
}

// lock takes the writer's lock of path.
func (st *logStore) lock(path string) (unlock func()) {
	st.mu.Lock()
	l := st.locks[path]
	if l == nil {
		l = &pathLock{}
		st.locks[path] = l
	}
	l.n++
	st.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		st.mu.Lock()
		if l.n--; l.n == 0 {
			delete(st.locks, path)
		}
		st.mu.Unlock()
	}
}

// errTooLarge is a bundle over the store's limit.
type errTooLarge struct{ limit int64 }

func (e *errTooLarge) Error() string { return fmt.Sprintf("log file is larger than %d bytes", e.limit) }

// errEmpty is an upload without content: it would replace a bundle with
// nothing.
var errEmpty = errors.New("empty log file")

// readError is a failure to read what the client sends; anything else
// store returns is the server's (disk full, permissions).
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// store streams src into path: into a temporary file next to it, hashed
// while written, fsynced, then renamed over path, so that a reader sees
// the old bundle or the new one and a failed upload leaves nothing. It
// returns the size and the SHA-256 of what it stored.
func (st *logStore) store(path string, src io.Reader) (int64, string, error) {
	unlock := st.lock(path)
	defer unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return 0, "", fmt.Errorf("store logs: %w", err)
	}
	sum := sha256.New()
	var n int64
	err := atomicfile.Stream(path, 0o600, func(f io.Writer) error {
		w := &trackedWriter{w: io.MultiWriter(f, sum)}
		var err error
		n, err = io.Copy(w, io.LimitReader(src, st.max+1))
		switch {
		case w.err != nil:
			return fmt.Errorf("store logs: %w", w.err)
		case err != nil:
			return &readError{err}
		case n > st.max:
			return &errTooLarge{st.max}
		case n == 0:
			return errEmpty
		}
		return nil
	})
	if err != nil {
		return 0, "", err
	}
	return n, hex.EncodeToString(sum.Sum(nil)), nil
}

// trackedWriter remembers its writer's error, which io.Copy does not tell
// apart from its reader's.
type trackedWriter struct {
	w   io.Writer
	err error
}

func (t *trackedWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil {
		t.err = err
	}
	return n, err
}

// bundle is a stored file opened for a download, under the name it is
// sent with.
type bundle struct {
	name string
	f    *os.File
	size int64
}

// open opens path for a download; a file that is not there is (nil, nil).
func (st *logStore) open(path, name string) (*bundle, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open logs: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open logs: %w", err)
	}
	// The size of the file as opened: a later upload renames a new file
	// over the path and leaves this one as it is.
	return &bundle{name: name, f: f, size: fi.Size()}, nil
}

// writeTar writes bundles as one uncompressed tar, the way assisted
// packs a cluster's logs.
func writeTar(w io.Writer, bundles []*bundle, mtime time.Time) error {
	tw := tar.NewWriter(w)
	for _, b := range bundles {
		hdr := &tar.Header{Name: b.name, Mode: 0o644, Size: b.size, ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.CopyN(tw, b.f, b.size); err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
	}
	return tw.Close()
}

func closeBundles(bs []*bundle) {
	for _, b := range bs {
		b.f.Close()
	}
}

// removeFile removes path; a path that is not there is not an error.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

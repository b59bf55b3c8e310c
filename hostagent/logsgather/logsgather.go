// Package logsgather runs the logs-gather step (docs/reference/agent-and-installer.md
// §2.12) in Go, in place of the agent's logs_sender container: it reports
// the collection's progress, packs what a nodezero host has to say about
// itself into a tar.gz (the journal of nodezero's units, the console's
// /etc/issue.d texts, /var/log/agent.log, the disks by id and path, the
// mounts) with a manifest.txt of what was collected and what was not, and
// uploads it as the host's logs (V2UploadLogs, logs_type host).
//
// The installer gather of the bootstrap host (installer-gather.sh over SSH
// to the masters) and the podman/LVM listings of assisted's agent have no
// counterpart here: a nodezero host in discovery runs neither.
//
// logsgather imports only the wire package; the caller
// passes the service client (Options.Service).
package logsgather

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// DefaultMaxFile bounds one collected file: a larger one keeps its last
// DefaultMaxFile bytes, where a log's news is.
const DefaultMaxFile = 32 << 20

// journalLines is how many of the newest journal lines of nodezero's
// units are collected.
const journalLines = 200000

// BundleName is the file name the bundle is uploaded under, as the real
// agent names it.
const BundleName = "logs.tar.gz"

// Service is the assisted service as the step talks to it. *wire.Client is
// one; tests pass a fake or a client of a test server.
type Service interface {
	UpdateHostLogsProgress(ctx context.Context, infraEnvID, hostID string, state wire.LogsState) error
	UploadLogs(ctx context.Context, clusterID string, t wire.LogsTarget, fileName string, file io.Reader) error
}

// Options configure the step.
type Options struct {
	Service Service
	// Root is the host's root: etc/issue.d and var/log/agent.log are read
	// under it. "" is "/".
	Root string
	// HardwareRoot is where dev/disk and proc are read: the root the
	// inventory reads the hardware from. "" is Root.
	HardwareRoot string
	// Journal collects the journal of nodezero's units with journalctl.
	// Only a live host has a journal of its own; a test or sandbox host
	// reading a hardware tree would collect the machine's.
	Journal bool
	// TempDir holds the bundle while it is built and sent; "" is
	// os.TempDir().
	TempDir string
	// MaxFile bounds one collected file; 0 is DefaultMaxFile.
	MaxFile int64
	// Now stamps the manifest and the bundle's entries; nil is time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.HardwareRoot == "" {
		o.HardwareRoot = o.Root
	}
	if o.MaxFile <= 0 {
		o.MaxFile = DefaultMaxFile
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Step returns the logs-gather step. Its arg is a LogsGatherCmdRequest; it
// reports requested and collecting, builds and uploads the bundle, reports
// completed and exits 0. A bundle that cannot be built or sent, or a
// completed report the service refuses, exits 1 with the reason in stderr;
// an item that cannot be collected is only noted in the manifest. Progress
// reports before the upload that fail are warnings in stderr, as the real
// agent only logs them.
func Step(o Options) func(ctx context.Context, args []string) (output, stderr string, exitCode int) {
	o = o.withDefaults()
	return func(ctx context.Context, args []string) (string, string, int) {
		var req wire.LogsGatherCmdRequest
		if err := wire.DecodeStepArg(wire.StepTypeLogsGather, args, &req); err != nil {
			return step.NotRun(err)
		}
		if req.ClusterID == "" || req.HostID == "" || req.InfraEnvID == "" {
			return "", "logs-gather args: cluster_id, host_id and infra_env_id are required", step.ExitNotRun
		}
		if o.Service == nil {
			return "", "logs-gather: no service to upload to", step.ExitNotRun
		}
		var warnings []string
		for _, st := range []wire.LogsState{wire.LogsStateRequested, wire.LogsStateCollecting} {
			if err := o.Service.UpdateHostLogsProgress(ctx, req.InfraEnvID, req.HostID, st); err != nil {
				warnings = append(warnings, err.Error())
			}
		}
		if err := gatherAndUpload(ctx, o, req); err != nil {
			return "", strings.Join(append(warnings, err.Error()), "; "), 1
		}
		if err := o.Service.UpdateHostLogsProgress(ctx, req.InfraEnvID, req.HostID, wire.LogsStateCompleted); err != nil {
			return "", strings.Join(append(warnings, err.Error()), "; "), 1
		}
		return "", strings.Join(warnings, "; "), 0
	}
}

// gatherAndUpload builds the bundle in a temporary file and uploads it.
func gatherAndUpload(ctx context.Context, o Options, req wire.LogsGatherCmdRequest) error {
	f, err := os.CreateTemp(o.TempDir, "nodezero-logs-*.tar.gz")
	if err != nil {
		return fmt.Errorf("build logs bundle: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if err := Gather(ctx, o, req, f); err != nil {
		return fmt.Errorf("build logs bundle: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("build logs bundle: %w", err)
	}
	target := wire.LogsTarget{Type: wire.LogsTypeHost, InfraEnvID: req.InfraEnvID, HostID: req.HostID}
	return o.Service.UploadLogs(ctx, req.ClusterID, target, BundleName, f)
}

// Gather writes the bundle of req's host to w as a tar.gz whose entries
// sit under logs_host_<host_id>/, as the real agent's do, with
// manifest.txt last. Only writing w, or ctx ending, is an error.
func Gather(ctx context.Context, o Options, req wire.LogsGatherCmdRequest, w io.Writer) error {
	o = o.withDefaults()
	b := &bundle{
		dir: "logs_host_" + req.HostID, mtime: o.Now(),
		zw: gzip.NewWriter(w),
	}
	b.tw = tar.NewWriter(b.zw)
	b.journal(ctx, o)
	b.issues(o)
	b.file(o, "var/log/agent.log", filepath.Join(o.Root, "var/log/agent.log"))
	b.links(o, "disks/by-id.txt", "dev/disk/by-id")
	b.links(o, "disks/by-path.txt", "dev/disk/by-path")
	b.mounts(o)
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.err != nil {
		return b.err
	}
	if err := b.add("manifest.txt", []byte(b.manifest(req, o.Now()))); err != nil {
		return err
	}
	if err := b.tw.Close(); err != nil {
		return err
	}
	return b.zw.Close()
}

// bundle is a tar.gz being written, and the manifest of what went in.
type bundle struct {
	dir   string
	mtime time.Time
	zw    *gzip.Writer
	tw    *tar.Writer
	lines []string // manifest entries
	err   error    // the first write error: the bundle is lost
}

func (b *bundle) note(format string, a ...any) { b.lines = append(b.lines, fmt.Sprintf(format, a...)) }

// add writes one entry of the bundle.
func (b *bundle) add(name string, data []byte) error {
	return b.addFrom(name, int64(len(data)), bytes.NewReader(data))
}

func (b *bundle) addFrom(name string, size int64, r io.Reader) error {
	if b.err != nil {
		return b.err
	}
	hdr := &tar.Header{Name: path.Join(b.dir, name), Mode: 0o644, Size: size, ModTime: b.mtime, Typeflag: tar.TypeReg}
	if err := b.tw.WriteHeader(hdr); err != nil {
		b.err = err
		return err
	}
	if _, err := io.CopyN(b.tw, r, size); err != nil {
		b.err = err
		return err
	}
	return nil
}

// collected adds data as name and notes it.
func (b *bundle) collected(name string, data []byte, from int64) {
	if b.add(name, data) != nil {
		return
	}
	if from > 0 {
		b.note("ok        %s: %d bytes, the last of %d", name, len(data), from+int64(len(data)))
		return
	}
	b.note("ok        %s: %d bytes", name, len(data))
}

// journal collects the newest lines of nodezero's units' journal.
func (b *bundle) journal(ctx context.Context, o Options) {
	const name = "journal/nodezero.log"
	if !o.Journal {
		b.note("skipped   %s: not a live host", name)
		return
	}
	jc, err := exec.LookPath("journalctl")
	if err != nil {
		b.note("skipped   %s: no journalctl", name)
		return
	}
	out, err := os.CreateTemp(o.TempDir, "nodezero-journal-*")
	if err != nil {
		b.note("failed    %s: %v", name, err)
		return
	}
	defer os.Remove(out.Name())
	defer out.Close()
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, jc, "--no-pager", "--all", "-o", "short-iso", "-u", "nodezero*", "-n", fmt.Sprint(journalLines))
	cmd.Stdout, cmd.Stderr = out, &limitedBuilder{b: &stderr, n: 4 << 10}
	if err := cmd.Run(); err != nil {
		b.note("failed    %s: journalctl: %v: %s", name, err, strings.TrimSpace(stderr.String()))
		return
	}
	size, err := out.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = out.Seek(max(0, size-o.MaxFile), io.SeekStart)
	}
	if err != nil {
		b.note("failed    %s: %v", name, err)
		return
	}
	n := min(size, o.MaxFile)
	if b.addFrom(name, n, out) != nil {
		return
	}
	b.note("ok        %s: %d bytes", name, n)
}

// issues collects the console's texts, one entry per file of etc/issue.d.
func (b *bundle) issues(o Options) {
	dir := filepath.Join(o.Root, "etc/issue.d")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		b.note("missing   etc/issue.d")
		return
	}
	if err != nil {
		b.note("failed    etc/issue.d: %v", err)
		return
	}
	n := 0
	for _, e := range ents {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		b.file(o, path.Join("etc/issue.d", e.Name()), filepath.Join(dir, e.Name()))
		n++
	}
	if n == 0 {
		b.note("missing   etc/issue.d/*: no files")
	}
}

// file collects one file, its last MaxFile bytes when it is larger.
func (b *bundle) file(o Options, name, p string) {
	data, from, err := ReadTail(p, o.MaxFile)
	switch {
	case errors.Is(err, os.ErrNotExist):
		b.note("missing   %s", name)
	case err != nil:
		b.note("failed    %s: %v", name, err)
	default:
		b.collected(name, data, from)
	}
}

// links lists a directory of symlinks as `ls -l` shows them, name ->
// target, sorted.
func (b *bundle) links(o Options, name, dir string) {
	full := filepath.Join(o.HardwareRoot, dir)
	ents, err := os.ReadDir(full)
	if errors.Is(err, os.ErrNotExist) {
		b.note("missing   %s: no %s", name, dir)
		return
	}
	if err != nil {
		b.note("failed    %s: %v", name, err)
		return
	}
	var lines []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(full, e.Name()))
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s (not a link: %v)", e.Name(), err))
			continue
		}
		lines = append(lines, e.Name()+" -> "+target)
	}
	sort.Strings(lines)
	b.collected(name, []byte(strings.Join(lines, "\n")+"\n"), 0)
}

// mounts collects the mount table: proc/mounts, or proc/self/mounts in a
// hardware tree that has only that.
func (b *bundle) mounts(o Options) {
	const name = "proc/mounts"
	for _, p := range []string{"proc/mounts", "proc/self/mounts"} {
		data, from, err := ReadTail(filepath.Join(o.HardwareRoot, p), o.MaxFile)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			b.note("failed    %s: %v", name, err)
			return
		}
		b.collected(name, data, from)
		return
	}
	b.note("missing   %s", name)
}

// manifest is manifest.txt: whose bundle this is and a line per item.
func (b *bundle) manifest(req wire.LogsGatherCmdRequest, now time.Time) string {
	var s strings.Builder
	fmt.Fprintf(&s, "nodezero logs-gather\ncluster_id: %s\ninfra_env_id: %s\nhost_id: %s\nbootstrap: %v\ngathered_at: %s\n\n",
		req.ClusterID, req.InfraEnvID, req.HostID, req.Bootstrap, now.UTC().Format(time.RFC3339))
	for _, l := range b.lines {
		s.WriteString(l + "\n")
	}
	return s.String()
}

// ReadTail reads p, or its last limit bytes when it is larger, and
// returns where the part read starts. Files whose size stat does not know
// (/proc) are read up to limit. `nodezero gather` reads its files so too.
func ReadTail(p string, limit int64) ([]byte, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s is not a regular file", p)
	}
	var from int64
	if fi.Size() > limit {
		from = fi.Size() - limit
		if _, err := f.Seek(from, io.SeekStart); err != nil {
			return nil, 0, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit))
	return data, from, err
}

// limitedBuilder keeps the first n bytes written to it and drops the rest.
type limitedBuilder struct {
	b *strings.Builder
	n int
}

func (l *limitedBuilder) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

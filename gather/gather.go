// Package gather writes `nodezero gather`'s support bundle, the
// counterpart of ABI's agent-gather: one tar.gz of what a person needs to
// understand a host of an install from afar, with every secret redacted.
//
// The bundle's directory holds, by section:
//
//	config/   the host's install configuration under its own paths: /etc/assisted
//	          (rendezvous-host.env, manifests, hostconfig, network), the
//	          assisted-service and start-cluster env files, /opt/agent/tls,
//	          the pull secret, registries.conf, nodezero's units
//	store/    node zero only: clusters, infra-envs, hosts (validations_info and
//	          inventory parsed), events as JSON, the install files' names,
//	          and summary.txt (statuses and the validations that do not pass)
//	status/   the console's /etc/issue.d, motd, host-config failures, the
//	          data directory's listing, boot-disk.json
//	network/  ip addr/link/route/rule, nmcli, resolv.conf, the hostname and the
//	          NetworkManager keyfiles
//	logs/     the journal of nodezero's units and systemctl status (live host),
//	          /var/log/agent.log, extra log files (a sandbox host's run.log)
//	MANIFEST.txt  every item: ok, missing, not found, failed or skipped, and why
//
// Secrets are redacted by the Redactor: values of secret keys in env,
// keyfile, YAML and JSON files keep their key with <redacted> as value,
// and every entry then goes through the Text pass (private key blocks,
// JWTs, URL passwords, and every secret value seen anywhere in the
// bundle). Only a failure to write the bundle is an error; anything
// missing or failing on the host is a line of the manifest.
//
// The store is read from a snapshot (store.go): the service's own file is
// only ever opened read-only, never migrated, and may be in use. Where the
// bundle goes, its name and the atomic file it is written to are
// output.go's.
//
// gather is a composition package for `nodezero gather`: it may import the
// store, hostagent/logsgather (the agent's tail reader) and internal/
// leaves; nothing of the project imports it but cmd.
package gather

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/onhost"
)

// DefaultMaxFile bounds one collected file or command output: a larger one
// keeps its last DefaultMaxFile bytes, where a log's news is.
const DefaultMaxFile = 32 << 20

// DataDirPath is node zero's data directory on the host (the store, the
// uploaded logs) and the host's own state files.
const DataDirPath = onhost.DataDir

// Options say what to gather and from where.
type Options struct {
	// Root is the host's root directory; "/" is the live host. Files are
	// read under it; commands run in the gather's own namespaces.
	Root string
	// DataDir is node zero's data directory; "" is Root/var/lib/nodezero.
	DataDir string
	// Journal collects the journal of nodezero's units and their systemctl
	// status. Only the live host has a journal of its own.
	Journal bool
	// Since limits the journal (journalctl --since).
	Since string
	// ExtraLogs are log files outside Root to collect as logs/<base name>.
	ExtraLogs []string
	// Dir is the bundle's top directory; "" is "agent-gather".
	Dir string
	// Host names the host in the manifest.
	Host string
	// Version is the binary's, for the manifest.
	Version string
	// LookPath finds commands; nil is exec.LookPath.
	LookPath func(string) (string, error)
	// CommandTimeout bounds one command, four times that the journal; 0 is
	// 30 s.
	CommandTimeout time.Duration
	// MaxFile bounds one entry; 0 is DefaultMaxFile.
	MaxFile int64
	// TempDir holds the store's snapshot; "" is os.TempDir().
	TempDir string
	// Now stamps the bundle; nil is time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Root == "" {
		o.Root = "/"
	}
	if o.DataDir == "" {
		o.DataDir = filepath.Join(o.Root, DataDirPath)
	}
	if o.Dir == "" {
		o.Dir = "agent-gather"
	}
	if o.LookPath == nil {
		o.LookPath = exec.LookPath
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = 30 * time.Second
	}
	if o.MaxFile <= 0 {
		o.MaxFile = DefaultMaxFile
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// gatherer is one gather in progress.
type gatherer struct {
	o   Options
	red *Redactor
	b   *bundle
}

// Write gathers the host and writes the bundle to w as a tar.gz. The
// report says what each item became. Only writing w, or ctx ending, is an
// error; the bundle is lost then.
//
// The sections are gathered config and store first: the secret values
// they redact are then known, and redacted from the network state and the
// logs wherever they appear.
func Write(ctx context.Context, o Options, w io.Writer) (*Report, error) {
	o = o.withDefaults()
	now := o.Now()
	g := &gatherer{o: o, red: NewRedactor()}
	g.b = newBundle(w, o.Dir, now, g.red)
	g.learnTokens()
	g.configSection()
	g.storeSection(ctx)
	g.statusSection()
	g.networkSection(ctx)
	g.logsSection(ctx)
	if err := ctx.Err(); err != nil {
		return &g.b.rep, err
	}
	if g.b.err != nil {
		return &g.b.rep, g.b.err
	}
	header := fmt.Sprintf("nodezero gather %s\nhost: %s\nroot: %s\ndata directory: %s\ngathered at: %s\n"+
		"network commands show the network namespace gather ran in\n"+
		"secrets are replaced by %s; %d secret values were known\n",
		o.Version, o.Host, o.Root, o.DataDir, now.UTC().Format(time.RFC3339), Redacted, g.red.Known())
	if err := g.b.close(header); err != nil {
		return &g.b.rep, err
	}
	return &g.b.rep, nil
}

// learnTokens makes the tokens of node zero's auth directory known (the
// service's own when it made them), so they are redacted wherever they
// appear; the files themselves are not collected.
func (g *gatherer) learnTokens() {
	paths, _ := filepath.Glob(filepath.Join(g.o.DataDir, "auth", "*.token"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			g.red.Learn(string(b))
		}
	}
}

// configSection collects the install configuration: what the config image
// (or the factory image) put on the host, and nodezero's units.
func (g *gatherer) configSection() {
	const s = "config"
	for _, dir := range []string{
		"/etc/assisted",
		"/usr/local/share/assisted-service",
		"/usr/local/share/start-cluster",
		"/opt/agent/tls",
		"/etc/systemd/system.conf.d",
	} {
		g.tree(s, dir)
	}
	for _, f := range []string{
		"/root/.docker/config.json",
		"/etc/containers/registries.conf",
		"/etc/chrony.conf",
		"/etc/hostname",
		"/usr/share/nodezero/payload/payload.json",
	} {
		g.file(s, f)
	}
	units, _ := filepath.Glob(filepath.Join(g.o.Root, "etc/systemd/system/nodezero*"))
	if len(units) == 0 {
		g.b.note(s+"/etc/systemd/system/nodezero*", StatusMissing, "nodezero's units are not installed under /etc/systemd/system")
	}
	for _, u := range units {
		g.file(s, "/etc/systemd/system/"+filepath.Base(u))
	}
}

// statusSection collects what the host shows and records of its progress.
func (g *gatherer) statusSection() {
	const s = "status"
	g.tree(s, "/etc/issue.d")
	g.tree(s, "/etc/motd.d")
	g.tree(s, "/var/run/agent-installer")
	g.file(s, onhost.BootDiskPath)
	g.file(s, onhost.NetworkAppliedPath)
	g.dataDirListing(s + "/data-dir.txt")
}

// dataDirListing lists node zero's data directory (mode, size, time,
// path) without reading any file: it holds the uploaded logs, the tokens
// and the disks of a sandbox host.
func (g *gatherer) dataDirListing(name string) {
	root := g.o.DataDir
	if _, err := os.Stat(root); err != nil {
		g.b.note(name, StatusMissing, "%s: %v", root, err)
		return
	}
	var lines []string
	const maxLines = 5000
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, fmt.Sprintf("%s: %v", p, err))
			return nil
		}
		if len(lines) >= maxLines {
			return filepath.SkipAll
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		lines = append(lines, fmt.Sprintf("%s %12d %s %s", fi.Mode(), fi.Size(), fi.ModTime().UTC().Format(time.RFC3339), rel))
		return nil
	})
	if err != nil {
		lines = append(lines, err.Error())
	}
	g.b.add(name, []byte(fmt.Sprintf("%s\n%s\n", root, strings.Join(lines, "\n"))), 0, fmt.Sprintf("%d entries", len(lines)))
}

// networkCommands are read-only: they ask the kernel and NetworkManager
// and send nothing on the network.
var networkCommands = []struct {
	name string
	args []string
}{
	{"ip-addr.txt", []string{"ip", "-d", "addr", "show"}},
	{"ip-link.txt", []string{"ip", "-d", "-s", "link", "show"}},
	{"ip-route.txt", []string{"ip", "route", "show"}},
	{"ip-6-route.txt", []string{"ip", "-6", "route", "show"}},
	{"ip-rule.txt", []string{"ip", "rule", "show"}},
	{"ip-6-rule.txt", []string{"ip", "-6", "rule", "show"}},
	{"nmcli-general.txt", []string{"nmcli", "general", "status"}},
	{"nmcli-device.txt", []string{"nmcli", "device", "status"}},
	{"nmcli-connection.txt", []string{"nmcli", "connection", "show"}},
}

// networkSection collects the network state: commands, the resolver, the
// hostname and the keyfiles.
func (g *gatherer) networkSection(ctx context.Context) {
	const s = "network"
	for _, c := range networkCommands {
		g.command(ctx, g.o.CommandTimeout, s+"/"+c.name, c.args...)
	}
	g.file(s, "/etc/resolv.conf")
	g.hostname(s + "/hostname.txt")
	g.tree(s, "/etc/NetworkManager/system-connections")
	g.tree(s, "/etc/NetworkManager/conf.d")
}

// hostname records the host's configured name and the kernel's.
func (g *gatherer) hostname(name string) {
	var b strings.Builder
	if data, err := os.ReadFile(filepath.Join(g.o.Root, "etc/hostname")); err == nil {
		fmt.Fprintf(&b, "/etc/hostname: %s\n", strings.TrimSpace(string(data)))
	} else {
		fmt.Fprintf(&b, "/etc/hostname: %v\n", err)
	}
	k, err := os.Hostname()
	if err != nil {
		k = err.Error()
	}
	if g.o.Root == "/" {
		fmt.Fprintf(&b, "kernel: %s\n", k)
	} else {
		fmt.Fprintf(&b, "kernel (of the machine gather ran on, not of this root): %s\n", k)
	}
	g.b.add(name, []byte(b.String()), 0, "")
}

// logsSection collects the journal and the log files.
func (g *gatherer) logsSection(ctx context.Context) {
	const s = "logs"
	if g.o.Journal {
		// Without a window, the newest entries: journalctl -n does not
		// read the whole journal to find them.
		window := []string{"-n", "300000"}
		if g.o.Since != "" {
			window = []string{"--since", g.o.Since}
		}
		long := 4 * g.o.CommandTimeout
		g.command(ctx, long, s+"/journal-nodezero.log",
			append([]string{"journalctl", "--no-pager", "--all", "-o", "short-iso-precise", "-u", "nodezero*"}, window...)...)
		g.command(ctx, long, s+"/journal-NetworkManager.log",
			append([]string{"journalctl", "--no-pager", "-o", "short-iso-precise", "-u", "NetworkManager*"}, window...)...)
		g.command(ctx, g.o.CommandTimeout, s+"/systemctl-status.txt", "systemctl", "--no-pager", "--all", "--full", "status", "nodezero*")
	} else {
		g.b.note(s+"/journal-nodezero.log", StatusSkipped, "the root is not / : a test or sandbox host has no journal of its own")
	}
	g.file(s, "/var/log/agent.log")
	for _, p := range g.o.ExtraLogs {
		g.collect(s+"/"+filepath.Base(p), p)
	}
}

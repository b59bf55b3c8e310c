// Command nodezero installs a bare-metal cluster from a factory disk image.
// One binary: the on-host daemon, the embedded assisted service, the host
// agent and the tools around them. main only parses flags and wires
// packages; os.Exit lives here and nowhere else.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set by the build (-ldflags "-X main.version=...").
var version = "dev"

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"create config-image", "the config image (ISO) and auth/ from install-config.yaml + agent-config.yaml", runCreate},
		{"create cluster-manifests", "the ZTP manifests from the same inputs", runCreate},
		{"create node-config-image", "day 2: the image that adds nodes-config.yaml's hosts to an installed cluster", runCreate},
		{"create factory-image", "the factory disk image every host boots (Debian 12, nodezero, the payload)", runCreate},
		{"sandbox", "install a whole cluster on this machine, hosts as processes on loopback (add-nodes: day 2)", runSandbox},
		{"wait-for", "follow an install from a workstation: bootstrap-complete | install-complete | add-nodes", runWaitFor},
		{"console", "the host's console: checks, network, rendezvous IP, install dashboard", runConsole},
		{"gather", "a support bundle of this host, secrets redacted", runGather},
		{"run", "a host's boot sequence: config image, network, node zero, service, agent", runRun},
		{"install", "lay the binary and systemd units into a factory image tree", runInstall},
		{"load-config-image", "extract a config image into a host's root", runLoadConfigImage},
		{"service", "the embedded assisted service alone (v2 REST API, SQLite)", runService},
		{"agent", "the host agent alone, against any assisted v2 service", runAgent},
		{"loadtest", "measure the service under real or simulated agents", runLoadtest},
		{"version", "print the version (also --version)", runVersion},
	}
}

// runVersion is `nodezero version` (and --version).
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags(stderr, "version", "print the version of this binary", "", "nodezero version", "nodezero --version")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, "nodezero", version)
	return err
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		os.Exit(2)
	case errors.Is(err, flag.ErrHelp):
		// -h, --help or help: what was asked for was printed.
	case errors.As(err, new(statusError)):
		var e statusError
		errors.As(err, &e)
		fmt.Fprintln(os.Stderr, "nodezero:", err)
		os.Exit(e.ExitStatus())
	default:
		fmt.Fprintln(os.Stderr, "nodezero:", err)
		os.Exit(1)
	}
}

// errUsage ends a command line that names no command: the usage was
// printed to stderr, and the status is 2.
var errUsage = errors.New("no command given")

// statusError is an error that ends the process with its own exit status
// (a package error may carry one: an ExitStatus method is the whole contract)
// (wait-for's 5 and 6, run's exitReboot).
type statusError interface {
	error
	ExitStatus() int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return errUsage
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(stdout)
		return nil
	case "--version", "-version":
		args[0] = "version"
	}
	for _, c := range commands() {
		if name, _, _ := strings.Cut(c.name, " "); name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "nodezero installs a bare-metal cluster from a factory disk image and a config image.\n\nusage: nodezero <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-26s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'nodezero <command> -h' for a command's purpose, examples and flags.")
}

// newLogger returns a text logger on w at the named level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	l, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// parseLevel reads --log-level.
func parseLevel(level string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return l, nil
}

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
		{"run", "the boot sequence of a host: config, network, hostname, node zero, then service and agent (--root)", runRun},
		{"console", "the terminal console: connectivity checks, network, rendezvous IP, install dashboard (tview)", runConsole},
		{"install", "lay the binary, systemd units, udev rule and enablement links into a factory image tree (--root, --now on a live host)", runInstall},
		{"service", "run the embedded assisted service alone (--dir, --listen)", runService},
		{"agent", "run the host agent against an assisted v2 service (--url, --infra-env-id)", runAgent},
		{"create", "create cluster-manifests --dir D: the ZTP manifests from install-config.yaml and agent-config.yaml", runCreate},
		{"load-config-image", "extract a config image into a host root (--root, --file ISO | --device DEV|auto)", runLoadConfigImage},
		{"sandbox", "install a whole cluster on this machine: 3 control-plane + 2 worker hosts on loopback, to installed (--masters, --workers, --dir)", runSandbox},
		{"wait-for", "follow an install from a workstation through node zero's API: bootstrap-complete|install-complete (--url or --rendezvous-ip, --token-file)", runWaitFor},
		{"gather", "a support bundle of this host: logs, journal, node zero's store, network state, config with secrets redacted (--root, -O FILE|-)", runGather},
		{"loadtest", "measure the service under real or simulated agents (--agents, --hosts, --runs)", runLoadtest},
		{"version", "print the version", func(_ context.Context, _ []string, stdout, _ io.Writer) error {
			_, err := fmt.Fprintln(stdout, "nodezero", version)
			return err
		}},
	}
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
		args = []string{"version"}
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	usage(stderr)
	return fmt.Errorf("unknown command %q", args[0])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: nodezero <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'nodezero <command> -h' for a command's flags.")
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

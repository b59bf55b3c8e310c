package register

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/wire"
)

// RunConfig is what Run needs on node zero.
type RunConfig struct {
	Client        *wire.Client // the user token's client of the local service
	Set           *manifests.Set
	HostConfigDir string // /etc/assisted/hostconfig; "" = no host configs
	FailuresFile  string // /var/run/agent-installer/host-config-failures; "" = not written
	Interval      time.Duration
	Status        func(string) // the one-line status, for the console and issue.d; nil = none
	Logger        *slog.Logger
}

// Run does on node zero what ABI's agent-register-cluster,
// agent-register-infraenv, apply-host-config and start-cluster-installation
// units do one after another: register the cluster from the manifests,
// apply its install-config overrides and upload the extra manifests,
// register the infra-env (all idempotently: a restart finds what a previous
// run registered and sends nothing twice), apply the host configs as hosts
// appear, and start the installation once exactly the expected hosts are
// known and the cluster is ready. It says what it waits for through Status
// at every turn and returns the cluster id once the service has accepted
// the install, or the context's error.
//
// Registration is retried while the service cannot be reached or fails;
// Run returns at once an error that retrying cannot fix: more than one
// cluster or infra-env (ErrMultiple), manifests that cannot be registered
// (ErrManifests), an extra manifest the cluster has with other content
// (ErrManifestExists), or overrides or a manifest the service refused
// with a 4xx.
func Run(ctx context.Context, cfg RunConfig) (string, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = 2 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	say := func(s string) {
		if cfg.Status != nil {
			cfg.Status(s)
		}
	}
	var cluster *wire.Cluster
	var infraEnv *wire.InfraEnv
	var overridesDone, manifestsDone bool
	// Registration retries until the service answers: on node zero it
	// starts alongside this loop. Each step is done once: a retry resumes
	// where the last attempt failed.
	for {
		var err, upload error
		if cluster == nil {
			cluster, err = RegisterCluster(ctx, cfg.Client, cfg.Set)
		}
		if err == nil && !overridesDone {
			var sent bool
			if sent, upload = ApplyInstallConfigOverrides(ctx, cfg.Client, cluster, cfg.Set); upload == nil {
				overridesDone = true
				if sent {
					cfg.Logger.Info("install-config overrides applied", "cluster", cluster.ID)
				}
			}
			err = upload
		}
		if err == nil && !manifestsDone {
			var names []string
			if names, upload = RegisterExtraManifests(ctx, cfg.Client, cluster.ID, cfg.Set); upload == nil {
				manifestsDone = true
				if len(names) > 0 {
					cfg.Logger.Info("extra manifests uploaded", "cluster", cluster.ID, "manifests", names)
				}
			}
			err = upload
		}
		if err == nil && infraEnv == nil {
			infraEnv, err = RegisterInfraEnv(ctx, cfg.Client, cfg.Set, cluster.ID)
		}
		if err == nil {
			break
		}
		if errors.Is(err, ErrMultiple) || errors.Is(err, ErrManifests) || errors.Is(err, ErrManifestExists) {
			return "", err // retrying cannot fix these
		}
		if code := wire.StatusCode(upload); code >= 400 && code < 500 {
			// The service refused the overrides or a manifest (invalid, or
			// the installation has started): sending it again cannot help.
			return "", err
		}
		say("Registering the cluster with the service: " + err.Error())
		cfg.Logger.Warn("registration failed; retrying", "err", err)
		if !backoff.Sleep(ctx, cfg.Interval) {
			return "", ctx.Err()
		}
	}
	masters, workers := ExpectedHosts(cfg.Set)
	for {
		if cfg.HostConfigDir != "" {
			res, err := ApplyHostConfigs(ctx, cfg.Client, infraEnv.ID, cfg.HostConfigDir)
			if err != nil {
				cfg.Logger.Warn("applying host configs", "err", err)
			}
			if cfg.FailuresFile != "" {
				if err := WriteFailures(cfg.FailuresFile, res); err != nil {
					cfg.Logger.Warn("writing host config failures", "err", err)
				}
			}
		}
		c, cerr := cfg.Client.GetCluster(ctx, cluster.ID)
		hosts, herr := cfg.Client.ListHosts(ctx, infraEnv.ID)
		if err := errors.Join(cerr, herr); err != nil {
			say("Waiting for the service: " + err.Error())
		} else {
			start, status := StartDecision(c, hosts, masters, workers)
			say(status)
			if start {
				_, err := cfg.Client.InstallCluster(ctx, cluster.ID)
				switch {
				case err == nil:
					say(fmt.Sprintf("Cluster installation started with %d control plane and %d worker hosts", masters, workers))
					return cluster.ID, nil
				case wire.IsStatus(err, 409):
					// The cluster left ready in between: wait for it again,
					// as start-cluster-installation does.
					cfg.Logger.Info("install refused, cluster no longer ready", "err", err)
				default:
					say("Starting the installation failed: " + err.Error())
				}
			}
		}
		if !backoff.Sleep(ctx, cfg.Interval) {
			return "", ctx.Err()
		}
	}
}

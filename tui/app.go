package tui

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Config is what the console shows and where it gets it from.
type Config struct {
	// Screen is drawn on; nil opens the terminal (tests pass a
	// tcell.NewSimulationScreen).
	Screen tcell.Screen
	// Mono draws without colour, for serial terminals: selection shows as
	// reverse video.
	Mono bool

	// ReleaseImage is the image the checks pull, shown on the checks page.
	ReleaseImage string
	// Checks run every CheckInterval (default 5 s). None: the checks page
	// is skipped (a local registry is configured: /etc/assisted/registry.env).
	Checks        []Check
	CheckInterval time.Duration
	// Countdown is how long the "checks passed" dialog waits before going
	// on by itself (default 20 s).
	Countdown time.Duration

	// NetState reads this host's network for the network page.
	NetState func(ctx context.Context) (NetState, error)
	// ConfigureNetwork runs while the UI is suspended (nmtui on the
	// console's terminal); nil hides "Configure network".
	ConfigureNetwork func() error

	// Rendezvous, when set, starts the interactive flow on the rendezvous
	// IP page.
	Rendezvous *Rendezvous

	// Source feeds the dashboard every Refresh (default 2 s); nil: no
	// dashboard, the console ends after the checks.
	Source  Source
	Refresh time.Duration
	// Reset, when set, is offered after a failed installation (key r,
	// after a confirmation): it asks node zero's service to reset the
	// cluster (POST …/clusters/{id}/actions/reset). It is the one thing
	// the console asks of the service rather than reads; nil: the
	// dashboard names the API call instead.
	Reset func(ctx context.Context, clusterID string) error
	// HostsRebootAfterReset: the hosts boot into discovery by themselves
	// after a reset (the sandbox reboots them), so the retry path does
	// not ask the person to.
	HostsRebootAfterReset bool
	// Notice is a sentence the dashboard shows under its own, e.g. why
	// the connectivity checks did not run.
	Notice string

	Now    func() time.Time // default time.Now
	Logger *slog.Logger
}

// Rendezvous is the interactive flow's rendezvous IP page.
type Rendezvous struct {
	// Root is the host's root directory: the page writes
	// Root/etc/assisted/rendezvous-host.env from its template.
	Root string
	// Prefill is the address already configured, if any.
	Prefill netip.Addr
	// LocalAddrs lists this host's addresses, for "this is the rendezvous
	// node".
	LocalAddrs func() ([]netip.Addr, error)
	// Probe checks that node zero's API answers at addr (default: GET
	// http://addr:8090/api/assisted-install/v2 with a 1 s timeout).
	Probe func(ctx context.Context, addr netip.Addr) error
}

// Page names, for App.show.
const (
	pageRendezvous       = "rendezvous"
	pageRendezvousSelect = "rendezvous-select"
	pageSplash           = "splash"
	pageChecks           = "checks"
	pageNetwork          = "network"
	pageDashboard        = "dashboard"
	pageHost             = "host"
	pageEvents           = "events"
	pageModal            = "modal" // the dialog on top, when one is open
)

// App is the running console. Its fields are touched only on tview's
// event goroutine (inside QueueUpdateDraw or an input handler), except
// where a comment says otherwise.
type App struct {
	cfg   Config
	app   *tview.Application
	pages *tview.Pages
	theme theme

	// current is the page shown under any dialog; back is where Esc goes.
	current string
	back    []string
	// onDialogClose gets the open dialog's answer.
	onDialogClose func(label string)
	// touched: the person pressed a key outside the rendezvous pages
	// (agent-tui's "dirty"): the countdown dialog does not come back.
	touched bool

	// ctx ends with Run; background work started by pages uses it.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	checks    *checksPage
	network   *networkPage
	rendez    *rendezvousPage
	dashboard *dashboardPage
}

// New builds the console and its pages without starting anything; Run
// starts it. Tests draw its pages on a simulation screen.
func New(cfg Config) *App {
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = 5 * time.Second
	}
	if cfg.Countdown <= 0 {
		cfg.Countdown = 20 * time.Second
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = 2 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	a := &App{cfg: cfg, app: tview.NewApplication(), pages: tview.NewPages(), theme: newTheme(cfg.Mono)}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.theme.apply()
	a.app.SetRoot(a.pages, true)
	if cfg.Screen != nil {
		a.app.SetScreen(cfg.Screen)
	}
	a.buildPages()
	a.app.SetInputCapture(a.globalKeys)
	a.show(a.firstPage())
	return a
}

// Run shows the console until the person quits, the flow ends (checks
// passed and no dashboard) or ctx ends.
func Run(ctx context.Context, cfg Config) error {
	return New(cfg).Run(ctx)
}

// Run starts the background work (checks, snapshots) and the event loop.
func (a *App) Run(ctx context.Context) error {
	stop := context.AfterFunc(ctx, a.app.Stop)
	defer stop()
	a.start()
	err := a.app.Run()
	a.cancel()
	a.wg.Wait()
	if err != nil {
		return err
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	return nil
}

// go runs fn in the background until Run ends.
func (a *App) goBackground(fn func(ctx context.Context)) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		fn(a.ctx)
	}()
}

// update runs fn on the event goroutine and redraws; safe from any
// goroutine. It returns false once the console is stopping
// (updateUnlessDone, checks_flow.go).
func (a *App) update(fn func()) bool { return a.updateUnlessDone(a.ctx, fn) }

// firstPage is where the console starts: the rendezvous page in the
// interactive flow, else the checks (behind the splash until the first
// pull result), else the dashboard.
func (a *App) firstPage() string {
	switch {
	case a.cfg.Rendezvous != nil:
		return pageRendezvous
	case len(a.cfg.Checks) > 0:
		return pageSplash
	case a.cfg.Source != nil:
		return pageDashboard
	default:
		return pageNetwork
	}
}

// next moves on from a finished step of the flow: the rendezvous IP saved,
// the checks passed. Past the last step the console ends, which lets the
// unit's login prompt follow.
func (a *App) next(from string) {
	switch {
	case from == pageRendezvous && len(a.cfg.Checks) > 0:
		a.show(pageChecks)
	case (from == pageRendezvous || from == pageChecks) && a.cfg.Source != nil:
		a.show(pageDashboard)
	default:
		a.app.Stop()
	}
}

// show makes name the page on screen, remembering the one before for Esc.
func (a *App) show(name string) {
	if a.current != "" && a.current != name {
		a.back = append(a.back, a.current)
	}
	a.current = name
	a.pages.SwitchToPage(name)
}

// goBack returns to the page before; false when there is none.
func (a *App) goBack() bool {
	if len(a.back) == 0 {
		return false
	}
	prev := a.back[len(a.back)-1]
	a.back = a.back[:len(a.back)-1]
	a.current = prev
	a.pages.SwitchToPage(prev)
	return true
}

// suspend stops drawing while fn owns the terminal (nmtui).
func (a *App) suspend(fn func()) bool { return a.app.Suspend(fn) }

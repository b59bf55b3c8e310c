package tui

import (
	"context"
	"fmt"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// checksPage is the connectivity checks page with its splash and the
// "checks passed" countdown dialog, and the engine that runs the checks
// (agent-tui's checks/engine.go and ui/controller.go, reference
// docs/reference/abi-on-host.md §12.2–12.3).
//
// Every check runs in its own goroutine every CheckInterval; results
// are applied on the event goroutine, where the flow is decided: the
// splash stays until the release image pull has a result; then a passed
// pull opens the countdown dialog and a failed one leaves the person on
// the checks page. A pull failing during the countdown closes the dialog;
// one passing again opens it again unless the person has pressed a key
// (a.touched).
type checksPage struct {
	a *App
	// timeout bounds one run of a check.
	timeout time.Duration
	results map[CheckID]CheckResult
	// shown: the splash has given way to the checks page.
	shown bool
	// countdown is the open countdown dialog, nil when none.
	countdown *tview.Modal
	// runCtx ends the checks' goroutines; stop cancels it.
	runCtx context.Context
	stop   context.CancelFunc

	page      *flowPage
	body      *tview.Flex
	pull      *tview.Table
	others    *tview.Table
	errors    *tview.TextView
	buttons   *tview.Flex
	configure *tview.Button
	quit      *tview.Button
}

func newChecksPage(a *App) *checksPage {
	p := &checksPage{
		a:       a,
		timeout: max(30*time.Second, 6*a.cfg.CheckInterval),
		results: map[CheckID]CheckResult{},
		stop:    func() {},
	}

	p.pull = tview.NewTable()
	p.pull.SetBorder(true).SetTitle(" " + checksPullTitle + " ")
	p.others = tview.NewTable()
	p.others.SetBorder(true).SetTitle(" " + checksOtherTitle + " ")
	p.errors = tview.NewTextView().SetWrap(true).SetDynamicColors(false)
	p.errors.SetBorder(true).SetTitle(" " + checksErrorsTitle + " ")
	p.errors.SetBorderPadding(0, 0, 1, 1)

	var row []*tview.Button
	help := checksHelpNoNet
	if a.cfg.ConfigureNetwork != nil {
		p.configure = a.flowButton(buttonConfigure, a.configureNetwork)
		row = append(row, p.configure)
		help = checksHelp
	}
	p.quit = a.flowButton(buttonQuit, a.app.Stop)
	row = append(row, p.quit)
	p.buttons = buttonRow(tview.AlignCenter, row...)

	p.body = tview.NewFlex().SetDirection(tview.FlexRow)
	a.theme.frame(p.body.Box, checksTitle)
	p.body.SetBorderPadding(0, 0, 1, 1)
	p.body.SetInputCapture(p.keys)
	p.page = newFlowPage(a, p.body, help, p.height)
	p.render()

	splash := tview.NewTextView().SetText(splashText).SetTextAlign(tview.AlignCenter)
	splash.SetBorder(true).SetBorderPadding(1, 1, 2, 2)
	splashPage := newFlowPage(a, splash, "q quit", func() int { return 5 })
	splashPage.width = len(splashText) + 8
	a.pages.AddPage(pageSplash, splashPage, true, false)
	a.pages.AddPage(pageChecks, p.page, true, false)
	return p
}

// height is how tall the checks frame wants to be: the pull and the
// buttons while it passes; with the other checks and the errors (agent-tui
// gives them 30 rows) while it fails.
func (p *checksPage) height() int {
	if p.failing() {
		return 30
	}
	return 2 + 3 + 1 + 1
}

func (p *checksPage) failing() bool {
	known, passed := checksOutcome(p.a.cfg.Checks, p.results)
	return known && !passed
}

// render shows p.results.
func (p *checksPage) render() {
	t := p.a.theme
	setRow := func(tb *tview.Table, i int, r checkRow) {
		style := t.pending
		switch r.State {
		case CheckPassed:
			style = t.good
		case CheckFailed:
			style = t.bad
		}
		tb.SetCell(i, 0, tview.NewTableCell(" "+r.Symbol).SetStyle(style))
		tb.SetCell(i, 1, tview.NewTableCell(r.Word).SetStyle(style))
		tb.SetCell(i, 2, tview.NewTableCell(tview.Escape(r.Text)).SetExpansion(1))
	}
	setRow(p.pull, 0, pullRow(p.a.cfg.ReleaseImage, p.a.cfg.Checks, p.results))
	others := otherRows(p.a.cfg.Checks, p.results)
	p.others.Clear()
	for i, r := range others {
		setRow(p.others, i, r)
	}
	p.errors.SetText(checkErrorsText(p.a.cfg.Checks, p.results))

	// The additional checks and the errors show only while the pull
	// fails, as agent-tui does.
	p.body.Clear()
	p.body.AddItem(p.pull, 3, 0, false)
	focus := []tview.Primitive{}
	if p.configure != nil {
		focus = append(focus, p.configure)
	}
	focus = append(focus, p.quit)
	if p.failing() {
		if len(others) > 0 {
			p.body.AddItem(p.others, len(others)+2, 0, false)
		}
		p.body.AddItem(p.errors, 0, 1, false)
		focus = append(focus, p.errors)
	} else {
		p.body.AddItem(nil, 1, 0, false)
	}
	p.body.AddItem(p.buttons, 1, 0, true)
	p.page.setFocusable(focus...)
	if p.a.current == pageChecks && !p.a.dialogOpen() {
		// The errors may have gone, and with them the focus.
		p.a.app.SetFocus(p.page.focusable[p.page.focused])
	}
}

// keys: Tab/Right and Backtab/Left move round the buttons (and the
// errors), c configures the network.
func (p *checksPage) keys(ev *tcell.EventKey) *tcell.EventKey {
	switch ev.Key() {
	case tcell.KeyTab, tcell.KeyRight:
		p.page.cycle(1)
		return nil
	case tcell.KeyBacktab, tcell.KeyLeft:
		p.page.cycle(-1)
		return nil
	case tcell.KeyRune:
		if (ev.Rune() == 'c' || ev.Rune() == 'C') && p.configure != nil {
			p.a.configureNetwork()
			return nil
		}
	}
	return ev
}

// start runs every check in its own goroutine until Run ends or the
// flow moves on from the checks.
func (p *checksPage) start() {
	p.runCtx, p.stop = context.WithCancel(p.a.ctx)
	for _, c := range p.a.cfg.Checks {
		p.a.goBackground(func(context.Context) { p.loop(p.runCtx, c) })
	}
}

// loop runs c every interval, a run at a time, and applies the results.
func (p *checksPage) loop(ctx context.Context, c Check) {
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		r := runCheck(ctx, c, p.timeout, p.a.cfg.Now)
		if ctx.Err() != nil {
			return
		}
		if !p.a.updateUnlessDoneIf(ctx, func() bool { return p.apply(r) }) {
			return
		}
		timer.Reset(p.a.cfg.CheckInterval)
	}
}

// runCheck runs c once, for at most timeout. A check that does not
// return in time is left to finish on its own: its result is dropped.
func runCheck(ctx context.Context, c Check, timeout time.Duration, now func() time.Time) CheckResult {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type ran struct {
		out string
		err error
	}
	done := make(chan ran, 1)
	go func() {
		out, err := c.Run(ctx)
		done <- ran{out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil && ctx.Err() == context.DeadlineExceeded {
			r.err = fmt.Errorf("timed out after %v: %w", timeout, r.err)
		}
		return checkResult(c, r.out, r.err, now())
	case <-ctx.Done():
		return checkResult(c, "", fmt.Errorf("timed out after %v", timeout), now())
	}
}

// apply records a result and moves the flow on; on the event goroutine.
// It reports whether the screen changed: not while another page shows.
func (p *checksPage) apply(r CheckResult) (redraw bool) {
	a := p.a
	if prev, ok := p.results[r.ID]; !ok || prev.State != r.State {
		a.cfg.Logger.Info("connectivity check", "check", string(r.ID), "state", newCheckRow(r.State, "").Word, "err", r.Err)
	}
	p.results[r.ID] = r
	p.render()
	defer func() { redraw = a.current == pageSplash || a.current == pageChecks }()
	known, passed := checksOutcome(a.cfg.Checks, p.results)
	if !known {
		return // the splash stays until the pull has a result
	}
	if !p.shown && a.current == pageSplash {
		p.shown = true
		a.replacePage(pageChecks)
		if passed {
			p.openCountdown()
		}
		return
	}
	p.shown = true
	switch {
	case !passed && a.dialogIs(p.countdown):
		a.closeDialog()
	case passed && !a.touched && a.current == pageChecks && !a.dialogOpen():
		p.openCountdown()
	}
	return
}

// openCountdown asks whether the person still wants to change the
// network; No, or no answer in a.cfg.Countdown, moves the flow on.
func (p *checksPage) openCountdown() {
	a := p.a
	p.countdown = a.countdownDialog(a.cfg.Countdown, countdownText, []string{buttonYes, buttonNo}, buttonNo,
		func(label string) {
			p.countdown = nil
			if label == buttonNo {
				p.stop() // the checks are done with: no pulls behind the dashboard
				a.finishStep(pageChecks)
			}
		})
}

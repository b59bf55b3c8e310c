package tui

// What the pages of the flow (checks, network, rendezvous) share: the
// page layout with its focus ring, buttons, the countdown dialog and a
// way to apply background results that cannot hang the shutdown.

import (
	"context"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// flowWidth is the flow pages' column: agent-tui's 80 columns, centred on
// a wider terminal.
const flowWidth = 80

// flowPage is a page of the flow: a centred column holding frame, width
// wide (flowWidth unless changed) and as
// tall as height asks (at most the screen less the help line), with the
// help line at the bottom. Tab, Backtab and the keys a page adds move the
// focus over focusable; showing the page again gives the focus back to
// where it was.
type flowPage struct {
	*tview.Flex
	a         *App
	middle    *tview.Flex
	frame     tview.Primitive
	width     int        // the frame's width, at most the screen's
	height    func() int // the frame's wanted height; <= 0: all there is
	focusable []tview.Primitive
	focused   int
	// beforeDraw, when set, runs on the event goroutine before each draw
	// with the frame's width.
	beforeDraw func(width int)
}

func newFlowPage(a *App, frame tview.Primitive, help string, height func() int) *flowPage {
	p := &flowPage{a: a, frame: frame, width: flowWidth, height: height}
	p.middle = tview.NewFlex().
		AddItem(nil, 0, 1, false).
		AddItem(frame, flowWidth, 0, true).
		AddItem(nil, 0, 1, false)
	p.Flex = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(nil, 0, 1, false).
		AddItem(p.middle, 0, 0, true).
		AddItem(nil, 0, 1, false).
		AddItem(a.helpLine(help), 1, 0, false)
	return p
}

// Draw sizes the frame to the screen, then draws.
func (p *flowPage) Draw(screen tcell.Screen) {
	_, _, w, h := p.GetRect()
	if p.beforeDraw != nil {
		p.beforeDraw(min(w, p.width))
	}
	want := p.height()
	if want <= 0 || want > h-1 {
		want = h - 1
	}
	p.ResizeItem(p.middle, want, 0)
	p.middle.ResizeItem(p.frame, min(w, p.width), 0)
	p.Flex.Draw(screen)
}

// Focus gives the focus to the widget that had it last.
func (p *flowPage) Focus(delegate func(tview.Primitive)) {
	if len(p.focusable) == 0 {
		p.Flex.Focus(delegate)
		return
	}
	p.focused = min(max(p.focused, 0), len(p.focusable)-1)
	delegate(p.focusable[p.focused])
}

// setFocusable replaces the focus ring, keeping the focused widget when
// it is still in it.
func (p *flowPage) setFocusable(items ...tview.Primitive) {
	var current tview.Primitive
	if p.focused < len(p.focusable) {
		current = p.focusable[p.focused]
	}
	p.focusable = items
	p.focused = 0
	for i, it := range items {
		if it == current {
			p.focused = i
		}
	}
}

// cycle moves the focus by delta places round the ring.
func (p *flowPage) cycle(delta int) {
	if len(p.focusable) == 0 {
		return
	}
	n := len(p.focusable)
	p.focused = ((p.focused+delta)%n + n) % n
	p.a.app.SetFocus(p.focusable[p.focused])
}

// flowButton is a button of the flow pages. Its label carries agent-tui's
// angle brackets, which show it as a button on a terminal without
// colour; the focused one is reverse video there.
func (a *App) flowButton(label string, selected func()) *tview.Button {
	b := tview.NewButton(label).SetSelectedFunc(selected)
	b.SetActivatedStyle(a.theme.selected)
	if a.theme.mono {
		b.SetStyle(tcell.StyleDefault)
	} else {
		b.SetStyle(a.theme.normal)
	}
	return b
}

// buttonRow lays buttons out on one row, centred (align tview.AlignCenter)
// or to the right, two columns apart.
func buttonRow(align int, buttons ...*tview.Button) *tview.Flex {
	row := tview.NewFlex()
	if align != tview.AlignLeft {
		row.AddItem(nil, 0, 1, false)
	}
	for i, b := range buttons {
		if i > 0 {
			row.AddItem(nil, 2, 0, false)
		}
		row.AddItem(b, tview.TaggedStringWidth(b.GetLabel())+2, 0, true)
	}
	if align != tview.AlignRight {
		row.AddItem(nil, 0, 1, false)
	}
	return row
}

// updateUnlessDone runs fn on the event goroutine and redraws, like
// a.update, but gives up when ctx ends: tview's QueueUpdate waits for the
// event loop to run fn, and an update queued as Run ends would wait for
// ever and with it Run's WaitGroup. Reports whether fn ran; when it
// reports false, fn may still be running, so the caller must not read
// what fn writes.
func (a *App) updateUnlessDone(ctx context.Context, fn func()) bool {
	return a.updateUnlessDoneIf(ctx, func() bool { fn(); return true })
}

// updateUnlessDoneIf is updateUnlessDone that redraws only when fn says
// the screen changed: a result for a page not on screen costs no frame.
func (a *App) updateUnlessDoneIf(ctx context.Context, fn func() (redraw bool)) bool {
	ran := make(chan struct{})
	// This goroutine is left behind, blocked, when the event loop has
	// ended without running fn; Run is over by then.
	go a.app.QueueUpdate(func() {
		if ctx.Err() == nil && fn() {
			a.app.ForceDraw()
		}
		close(ran)
	})
	select {
	case <-ran:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// dialogIs reports whether m is the dialog on screen.
func (a *App) dialogIs(m *tview.Modal) bool {
	name, front := a.pages.GetFrontPage()
	return m != nil && name == pageModal && front == m
}

// countdownDialog opens a dialog whose text counts down from total,
// updated every second; at zero it closes as if expire had been chosen.
// done gets the chosen label as with a.dialog. The dialog's tick stops
// when it closes.
func (a *App) countdownDialog(total time.Duration, text func(left time.Duration) string,
	buttons []string, expire string, done func(label string)) *tview.Modal {
	deadline := time.Now().Add(total)
	ctx, cancel := context.WithCancel(a.ctx)
	m := a.dialog(text(total), buttons, func(label string) {
		cancel()
		if done != nil {
			done(label)
		}
	})
	a.goBackground(func(context.Context) {
		defer cancel()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			left := time.Until(deadline)
			over := false
			ran := a.updateUnlessDone(ctx, func() {
				if !a.dialogIs(m) {
					over = true // replaced by another dialog
					return
				}
				if left <= 0 {
					over = true
					a.closeDialogWith(expire)
					return
				}
				m.SetText(text(left))
			})
			if !ran || over {
				return
			}
		}
	})
	return m
}

// replacePage shows name instead of the current page, which Esc then
// does not return to (the splash, a finished step).
func (a *App) replacePage(name string) {
	a.current = name
	a.pages.SwitchToPage(name)
}

// finishStep moves the flow on from a finished step; Esc does not lead
// back into it.
func (a *App) finishStep(from string) {
	a.back = nil
	a.next(from)
}

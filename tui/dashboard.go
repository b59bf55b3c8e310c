package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// Key help of the dashboard's pages. The dashboard offers r only after a
// failed installation, when the console can reset the cluster.
const (
	dashboardHelp      = "Tab focus  ↑↓ select  Enter host details  e events  n network  q quit"
	dashboardResetHelp = "Tab focus  ↑↓ select  Enter details  e events  n network  r reset  q quit"
	hostHelp           = "↑↓ PgUp PgDn scroll  Esc back  q quit"
)

// dashboardPage is the install dashboard (pageDashboard) and the detail of
// one host (pageHost). It shows the last Snapshot the Source gave: the
// cluster's status and progress, what the installation waits for, the
// failing cluster validations, the host table and the event tail. Its
// fields are touched only on the event goroutine.
type dashboardPage struct {
	a *App

	root    *sizedFlex
	frame   *tview.Flex
	status  *tview.TextView // status word and progress bar
	info    *tview.TextView // status_info
	waiting *tview.TextView // the waitingFor sentence
	next    *tview.TextView // nextStep: the retry path, what follows
	help    *tview.TextView
	// The failing cluster validations, under their label; both are
	// hidden when none fails.
	valsLabel *tview.TextView
	vals      *tview.TextView
	hostLabel *tview.TextView
	table     *tview.Table
	evLabel   *tview.TextView
	events    *tview.TextView

	hostRoot  *sizedFlex
	hostFrame *tview.Flex
	detail    *tview.TextView

	// The event list in full (pageEvents).
	evRoot  *sizedFlex
	evFrame *tview.Flex
	evText  *tview.TextView
	evWidth int

	snap     Snapshot
	hosts    []parsedHost // snap's hosts, sorted as the table shows them
	sentence string       // what the installation waits for
	// resetNote says how the last reset asked with r went ("" none).
	resetNote string
	valLines  []string // failing cluster validations, unwrapped
	cache     *parseCache
	focused   tview.Primitive // the focused section: vals, table or events
	selected  string          // id of the selected host, kept across refreshes
	shown     string          // id of the host on pageHost
	// The inner widths of the two frames at the last draw (0 before the
	// first): text is wrapped and the table's columns chosen for them.
	width, detailWidth int
	valRows            int  // the most lines the validations may take
	valsMore           bool // the validations take more lines than shown
	cols               []hostColumn
}

func newDashboardPage(a *App) *dashboardPage {
	p := &dashboardPage{a: a, cache: newParseCache()}
	line := func() *tview.TextView { return tview.NewTextView().SetWrap(false).SetScrollable(false) }
	p.status = line()
	p.info = line()
	p.waiting = line()
	p.next = line()
	p.valsLabel = line()
	p.vals = tview.NewTextView().SetWrap(false)
	p.hostLabel = line()
	p.table = tview.NewTable()
	p.table.SetFixed(1, 0).SetSelectable(true, false)
	a.theme.table(p.table)
	p.evLabel = line()
	p.events = tview.NewTextView().SetWrap(false)
	p.events.ScrollToEnd()

	p.frame = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(p.status, 1, 0, false).
		AddItem(p.info, 1, 0, false).
		AddItem(p.waiting, 1, 0, false).
		AddItem(p.next, 0, 0, false).
		AddItem(p.valsLabel, 0, 0, false).
		AddItem(p.vals, 0, 0, false).
		AddItem(p.hostLabel, 1, 0, false).
		AddItem(p.table, 0, 1, true).
		AddItem(p.evLabel, 1, 0, false).
		AddItem(p.events, 5, 0, false)
	a.theme.frame(p.frame.Box, "node zero")
	p.root = &sizedFlex{Flex: tview.NewFlex().SetDirection(tview.FlexRow), resize: p.layout}
	p.help = a.helpLine(dashboardHelp)
	p.root.AddItem(p.frame, 0, 1, true).AddItem(p.help, 1, 0, false)
	p.root.SetInputCapture(p.keys)

	// tview calls these holding the widget's lock: they note the focus
	// rather than ask the widget for it.
	for _, w := range []interface {
		tview.Primitive
		SetFocusFunc(func()) *tview.Box
		SetBlurFunc(func()) *tview.Box
	}{p.vals, p.table, p.events} {
		w.SetFocusFunc(func() { p.focused = w; p.relabel() })
		w.SetBlurFunc(func() {
			if p.focused == w {
				p.focused = nil
			}
			p.relabel()
		})
	}
	p.table.SetSelectionChangedFunc(func(row, _ int) {
		if i := row - 1; i >= 0 && i < len(p.hosts) {
			p.selected = p.hosts[i].Host.ID
		}
	})
	p.table.SetSelectedFunc(func(row, _ int) {
		if i := row - 1; i >= 0 && i < len(p.hosts) {
			p.showHost(p.hosts[i].Host.ID)
		}
	})

	p.detail = tview.NewTextView().SetWrap(false)
	p.hostFrame = tview.NewFlex().SetDirection(tview.FlexRow).AddItem(p.detail, 0, 1, true)
	a.theme.frame(p.hostFrame.Box, "Host")
	p.hostRoot = &sizedFlex{Flex: tview.NewFlex().SetDirection(tview.FlexRow), resize: func(w, _ int) {
		if w-2 != p.detailWidth {
			p.detailWidth = w - 2
			if p.shown != "" {
				p.fillDetail()
			}
		}
	}}
	p.hostRoot.AddItem(p.hostFrame, 0, 1, true).AddItem(a.helpLine(hostHelp), 1, 0, false)

	p.evText = tview.NewTextView().SetWrap(false)
	p.evFrame = tview.NewFlex().SetDirection(tview.FlexRow).AddItem(p.evText, 0, 1, true)
	a.theme.frame(p.evFrame.Box, "Events")
	p.evRoot = &sizedFlex{Flex: tview.NewFlex().SetDirection(tview.FlexRow), resize: func(w, _ int) {
		if w-2 != p.evWidth {
			p.evWidth = w - 2
			p.fillEvents()
		}
	}}
	p.evRoot.AddItem(p.evFrame, 0, 1, true).AddItem(a.helpLine(hostHelp), 1, 0, false)

	p.status.SetText("Connecting to node zero…")
	p.relabel()
	a.pages.AddPage(pageDashboard, p.root, true, false)
	a.pages.AddPage(pageHost, p.hostRoot, true, false)
	a.pages.AddPage(pageEvents, p.evRoot, true, false)
	return p
}

// start polls the Source every Refresh and shows each snapshot.
func (p *dashboardPage) start() {
	src, every := p.a.cfg.Source, p.a.cfg.Refresh
	p.a.goBackground(func(ctx context.Context) {
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			s := src.Snapshot(ctx)
			if ctx.Err() != nil || !p.a.update(func() { p.apply(s) }) {
				return
			}
			t.Reset(every)
		}
	})
}

// apply shows s. Event goroutine only.
func (p *dashboardPage) apply(s Snapshot) {
	p.snap = s
	p.hosts = parseHosts(s, p.cache)
	p.sentence = waitingForHosts(s, p.hosts)
	p.valLines = nil
	if s.Cluster != nil {
		p.valLines = clusterValidationLines(p.cache.validations(s.Cluster.ID, s.Cluster.ValidationsInfo))
	}

	title := "node zero"
	if s.Cluster != nil && s.Cluster.Name != "" {
		title = s.Cluster.Name
	}
	if s.Err != nil {
		title += " · reconnecting…"
	}
	p.a.theme.frame(p.frame.Box, title)
	if s.Cluster == nil && s.Err != nil {
		// Not "no cluster": node zero was not reached, so nobody knows.
		p.status.SetText("Not connected to node zero")
	} else {
		p.status.SetText(clusterHeader(s.Cluster, p.a.theme.mono))
	}
	if s.Cluster == nil || !resettable(s.Cluster) && busy(s.Cluster.Status) {
		p.resetNote = "" // the retry went on: the installation runs again
	}
	if p.resetOffered() {
		p.help.SetText(dashboardResetHelp)
	} else {
		p.help.SetText(dashboardHelp)
	}
	info := ""
	if s.Cluster != nil {
		info = s.Cluster.StatusInfo
	}
	p.info.SetText(info)
	names := make(map[string]string, len(p.hosts))
	for _, h := range p.hosts {
		names[h.Host.ID] = h.Name
	}
	p.events.SetText(strings.Join(eventLines(s.Events, names), "\n"))

	p.render()
	if p.shown != "" {
		p.fillDetail()
	}
	p.fillEvents()
}

// resetOffered reports whether r resets the cluster now: the installation
// failed and the console was given a way to ask for the reset.
func (p *dashboardPage) resetOffered() bool {
	return p.a.cfg.Reset != nil && resettable(p.snap.Cluster) && p.snap.Err == nil
}

// nextLines is the text under the sentence: the next step, and how the
// last reset went.
func (p *dashboardPage) nextLines() []string {
	var out []string
	if n := nextStep(p.snap, p.resetOffered(), p.a.cfg.HostsRebootAfterReset); n != "" && p.resetNote == "" {
		out = append(out, "» "+n)
	}
	if p.resetNote != "" {
		out = append(out, "» "+p.resetNote)
	}
	if p.a.cfg.Notice != "" {
		out = append(out, "» "+p.a.cfg.Notice)
	}
	return out
}

// render writes what depends on the frame's width: the wrapped sentence
// and validations, the heights they take, and the host table.
func (p *dashboardPage) render() {
	waiting := wrapText([]string{"» " + p.sentence}, p.width)
	if p.snap.Cluster == nil && p.snap.At.IsZero() && p.snap.Err == nil {
		waiting = nil // nothing fetched yet: the status line says so
	}
	p.waiting.SetText(strings.Join(waiting, "\n"))
	p.frame.ResizeItem(p.waiting, max(1, min(len(waiting), 3)), 0)
	next := wrapText(p.nextLines(), p.width)
	p.next.SetText(strings.Join(next, "\n"))
	p.frame.ResizeItem(p.next, min(len(next), 4), 0)
	vals := wrapText(p.valLines, p.width)
	p.vals.SetText(strings.Join(vals, "\n"))
	n := min(len(vals), p.valRows)
	p.valsMore = len(vals) > n
	label := 0
	if n > 0 {
		label = 1
	}
	p.frame.ResizeItem(p.valsLabel, label, 0)
	p.frame.ResizeItem(p.vals, n, 0)
	p.fillTable()
	p.relabel()
}

// layout fits the page to w×h cells before each draw: the validations
// take at most a few lines, the events a quarter of a tall screen, the
// table the rest.
func (p *dashboardPage) layout(w, h int) {
	evRows, valRows := 5, 3
	if h-3 >= 30 { // the frame's border and the help line
		evRows, valRows = 10, 6
	}
	p.frame.ResizeItem(p.events, evRows, 0)
	if w-2 != p.width || valRows != p.valRows {
		p.width, p.valRows = w-2, valRows
		p.render()
	}
}

// relabel writes the section labels, marking the focused section with
// "▶" (focus must show without colour).
func (p *dashboardPage) relabel() {
	mark := func(focused bool, s string) string {
		if focused {
			return "▶ " + s
		}
		return "  " + s
	}
	vals := "Cluster validations failing: " + strconv.Itoa(len(p.valLines))
	if p.valsMore {
		vals += "   (more: Tab here, then ↑↓)"
	}
	p.valsLabel.SetText(mark(p.focused == p.vals, vals))
	hosts := "Hosts: " + strconv.Itoa(len(p.hosts))
	if p.snap.ThisHost != "" {
		hosts += "   (* this host)"
	}
	p.hostLabel.SetText(mark(p.focused == p.table, hosts))
	p.evLabel.SetText(mark(p.focused == p.events, "Events   (e: all of them, in full)"))
	p.valsLabel.SetTextStyle(p.a.theme.title)
	p.hostLabel.SetTextStyle(p.a.theme.title)
	p.evLabel.SetTextStyle(p.a.theme.title)
}

// fillTable rebuilds the host table for the columns that fit its width,
// keeping the selected host selected.
func (p *dashboardPage) fillTable() {
	t := p.table
	p.cols = hostColumns(p.width, installing(p.snap.Cluster))
	t.Clear()
	for c, head := range hostHeaders(p.cols) {
		t.SetCell(0, c, tview.NewTableCell(head).SetSelectable(false).SetStyle(p.a.theme.title))
	}
	sel := -1
	for r, h := range p.hosts {
		if h.Host.ID == p.selected {
			sel = r
		}
		for c, cell := range hostRow(h, p.snap.Cluster, p.cols, p.snap.ThisHost, p.a.theme.mono) {
			tc := tview.NewTableCell(cell.Text).SetMaxWidth(hostColumnInfo[p.cols[c]].maxWidth)
			if cell.Bad {
				tc.SetStyle(p.a.theme.bad)
			}
			t.SetCell(r+1, c, tc)
		}
	}
	if len(p.hosts) == 0 {
		return
	}
	if sel < 0 {
		// The selected host is gone (or none was): keep the row.
		row, _ := t.GetSelection()
		sel = max(0, min(row-1, len(p.hosts)-1))
	}
	t.Select(sel+1, 0)
}

// showHost opens the detail of host id.
func (p *dashboardPage) showHost(id string) {
	p.shown = id
	p.detail.ScrollToBeginning()
	p.fillDetail()
	p.a.show(pageHost)
}

// fillDetail writes the detail of the shown host, keeping the scroll
// position across refreshes.
func (p *dashboardPage) fillDetail() {
	for _, h := range p.hosts {
		if h.Host.ID == p.shown {
			p.a.theme.frame(p.hostFrame.Box, "Host "+h.Name)
			lines := hostDetail(h, p.snap.ThisHost, p.a.theme.mono)
			if p.snap.Err != nil {
				lines = append([]string{"» " + reconnecting(p.snap), ""}, lines...)
			}
			text := strings.Join(wrapText(lines, p.detailWidth), "\n")
			if text != p.detail.GetText(false) {
				p.detail.SetText(text)
			}
			return
		}
	}
	p.a.theme.frame(p.hostFrame.Box, "Host")
	p.detail.SetText("✖ This host is no longer registered with node zero.")
}

// keys are the dashboard's own keys: Tab and Backtab move the focus
// between the validations, the table and the events; n opens the
// network page.
func (p *dashboardPage) keys(ev *tcell.EventKey) *tcell.EventKey {
	switch {
	case ev.Key() == tcell.KeyTab:
		p.cycle(1)
		return nil
	case ev.Key() == tcell.KeyBacktab:
		p.cycle(-1)
		return nil
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'n':
		if p.a.pages.HasPage(pageNetwork) {
			p.a.show(pageNetwork)
		}
		return nil
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'e':
		p.evText.ScrollToEnd()
		p.fillEvents()
		p.a.show(pageEvents)
		return nil
	case ev.Key() == tcell.KeyRune && ev.Rune() == 'r':
		if p.resetOffered() {
			p.askReset()
		}
		return nil
	}
	return ev
}

// fillEvents writes every event of the snapshot, wrapped so that each is
// read in full, on the events page.
func (p *dashboardPage) fillEvents() {
	names := make(map[string]string, len(p.hosts))
	for _, h := range p.hosts {
		names[h.Host.ID] = h.Name
	}
	lines := eventLines(p.snap.Events, names)
	title := fmt.Sprintf("Events: the newest %d, newest last", len(lines))
	if len(lines) == 0 {
		lines, title = []string{"… none yet"}, "Events"
	}
	p.a.theme.frame(p.evFrame.Box, title)
	text := strings.Join(wrapText(lines, p.evWidth), "\n")
	if text != p.evText.GetText(false) {
		p.evText.SetText(text)
	}
}

// askReset asks before resetting the cluster: every host goes back to
// discovery and must be booted from the discovery image again.
func (p *dashboardPage) askReset() {
	c := p.snap.Cluster
	name := c.Name
	if name == "" {
		name = c.ID
	}
	text := "Reset the cluster " + name + "?\n\nThe installation starts over: every host must be rebooted from the discovery image, registers again, and the installation starts once all are ready."
	p.a.dialog(text, []string{"Reset", "Cancel"}, func(label string) {
		if label != "Reset" {
			return
		}
		p.resetNote = "Resetting the cluster…"
		p.render()
		id, reset := c.ID, p.a.cfg.Reset
		p.a.goBackground(func(ctx context.Context) {
			err := reset(ctx, id)
			p.a.update(func() {
				switch {
				case err != nil:
					p.resetNote = "✖ The reset failed: " + err.Error()
				case p.a.cfg.HostsRebootAfterReset:
					p.resetNote = "The cluster was reset: the hosts reboot into discovery; the installation starts again once they are ready."
				default:
					p.resetNote = "The cluster was reset: now reboot every host from the discovery image; the installation starts again once they are ready."
				}
				p.render()
			})
		})
	})
}

// cycle moves the focus to the next (dir 1) or previous (-1) section.
func (p *dashboardPage) cycle(dir int) {
	order := []tview.Primitive{p.table}
	if len(p.valLines) > 0 {
		order = []tview.Primitive{p.vals, p.table}
	}
	order = append(order, p.events)
	cur := slices.Index(order, p.focused)
	if cur < 0 {
		cur = slices.Index(order, tview.Primitive(p.table))
	}
	next := (cur + dir + len(order)) % len(order)
	p.a.app.SetFocus(order[next])
}

// sizedFlex is a Flex that hears its size before each draw, so a page
// can wrap its text and pick its columns for the space it has.
type sizedFlex struct {
	*tview.Flex
	resize func(w, h int)
}

func (f *sizedFlex) Draw(screen tcell.Screen) {
	_, _, w, h := f.GetRect()
	f.resize(w, h)
	f.Flex.Draw(screen)
}

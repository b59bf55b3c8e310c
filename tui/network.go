package tui

import (
	"context"
	"errors"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// netStateTimeout bounds one read of the network state.
const netStateTimeout = 30 * time.Second

// networkPage shows this host's interfaces, routes and DNS as a tree
// (agent-tui's nmstate view, docs/reference/abi-on-host.md §12.5). It reads
// a.cfg.NetState in the background when it is first drawn, when it is
// shown and after the network was configured.
type networkPage struct {
	a      *App
	page   *flowPage
	tree   *tview.TreeView
	status *tview.TextView

	// requested: a read has been started at least once.
	requested bool
	// seq tells the newest read from older ones still under way.
	seq  int
	err  error
	have bool // a read has succeeded: the tree shows its state
}

func newNetworkPage(a *App) *networkPage {
	p := &networkPage{a: a}
	p.tree = tview.NewTreeView()
	p.tree.SetBorder(true).SetTitle(" " + networkTitle + " ")
	p.tree.SetSelectedFunc(p.toggle)
	p.tree.SetInputCapture(p.keys)

	p.status = tview.NewTextView().SetDynamicColors(false).SetWrap(true)
	frame := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(p.tree, 0, 1, true).
		AddItem(p.status, 1, 0, false)
	help := networkHelpNoNet
	if a.cfg.ConfigureNetwork != nil {
		help = networkHelp
	}
	p.page = newFlowPage(a, frame, help, func() int { return 0 })
	p.page.focusable = []tview.Primitive{p.tree}
	p.page.beforeDraw = func(width int) {
		if !p.requested {
			p.refresh()
		}
		// The status line wraps rather than cut a reason short.
		lines := len(tview.WordWrap(p.status.GetText(false), width))
		frame.ResizeItem(p.status, min(max(lines, 1), 4), 0)
	}
	p.setTree(treeItem{Text: "(network state unknown)"})
	a.pages.AddPage(pageNetwork, p.page, true, false)
	return p
}

// show shows the page with fresh data.
func (p *networkPage) show() {
	p.a.show(pageNetwork)
	p.refresh()
}

// refresh starts reading the network state; on the event goroutine.
func (p *networkPage) refresh() {
	p.requested = true
	read := p.a.cfg.NetState
	if read == nil {
		p.status.SetText(netStatusLine(false, nil, false))
		return
	}
	p.seq++
	seq := p.seq
	p.status.SetText(netStatusLine(true, nil, true))
	p.a.goBackground(func(ctx context.Context) {
		rctx, cancel := context.WithTimeout(ctx, netStateTimeout)
		st, err := read(rctx)
		cancel()
		p.a.updateUnlessDone(ctx, func() {
			if seq == p.seq {
				p.setResult(st, err)
			}
		})
	})
}

// setResult shows a read's outcome. A failed read keeps the tree of the
// last good one and says why under it.
func (p *networkPage) setResult(st NetState, err error) {
	p.err = err
	if err == nil {
		p.have = true
		p.setTree(netTree(st))
	}
	p.status.SetText(netStatusLine(false, err, true))
}

// setTree replaces the tree's nodes with spec's, all expanded.
func (p *networkPage) setTree(spec treeItem) {
	root := p.node(spec)
	p.tree.SetRoot(root).SetCurrentNode(root)
}

func (p *networkPage) node(it treeItem) *tview.TreeNode {
	n := tview.NewTreeNode(tview.Escape(it.Text)).
		SetReference(it.Text).
		SetExpanded(true).
		SetSelectedTextStyle(p.a.theme.selected)
	for _, c := range it.Children {
		n.AddChild(p.node(c))
	}
	return n
}

// toggle expands or collapses a node; a collapsed one says so with
// "(+)", not by colour.
func (p *networkPage) toggle(n *tview.TreeNode) {
	if len(n.GetChildren()) == 0 {
		return
	}
	text, _ := n.GetReference().(string)
	n.SetExpanded(!n.IsExpanded())
	if n.IsExpanded() {
		n.SetText(tview.Escape(text))
	} else {
		n.SetText(tview.Escape(text) + " (+)")
	}
}

func (p *networkPage) keys(ev *tcell.EventKey) *tcell.EventKey {
	if ev.Key() == tcell.KeyRune && (ev.Rune() == 'c' || ev.Rune() == 'C') && p.a.cfg.ConfigureNetwork != nil {
		p.a.configureNetwork()
		return nil
	}
	return ev
}

// configureNetwork hands the terminal to a.cfg.ConfigureNetwork (nmtui)
// and then shows the network page, read again. Esc returns from there to
// the page it was called from.
func (a *App) configureNetwork() {
	if a.cfg.ConfigureNetwork == nil {
		return
	}
	var err error
	if !a.suspend(func() { err = a.cfg.ConfigureNetwork() }) {
		err = errors.New("the console could not hand over the terminal")
	}
	a.network.show()
	if err != nil {
		a.dialog("Configuring the network failed: "+tview.Escape(err.Error()), []string{buttonOk}, nil)
	}
}

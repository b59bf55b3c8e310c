package tui

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// rendezvousProbeLimit bounds a Probe the caller gave, which may not
// keep to the default's second.
const rendezvousProbeLimit = 10 * time.Second

// rendezvousPage is the interactive flow's first step, agent-tui's
// rendezvous IP screens (docs/reference/abi-on-host.md §12.4): enter node
// zero's address, which is probed and saved, or pick one of this host's
// to make it node zero (pageRendezvousSelect). Saving writes
// /etc/assisted/rendezvous-host.env under Rendezvous.Root.
type rendezvousPage struct {
	a   *App
	cfg Rendezvous

	page      *flowPage
	input     *tview.InputField
	save      *tview.Button
	thisNode  *tview.Button
	configure *tview.Button

	selectPage  *flowPage
	selectFrame *tview.Flex
	list        *tview.List
	listNote    *tview.TextView
	addrs       []netip.Addr // the list's addresses, <Back> after them

	// prompted: the "already set" dialog has had its chance.
	prompted bool
}

func newRendezvousPage(a *App) *rendezvousPage {
	p := &rendezvousPage{a: a}
	if a.cfg.Rendezvous != nil {
		p.cfg = *a.cfg.Rendezvous
	}
	if p.cfg.Root == "" {
		p.cfg.Root = "/"
	}
	if p.cfg.LocalAddrs == nil {
		p.cfg.LocalAddrs = hostAddrs
	}
	if p.cfg.Probe == nil {
		p.cfg.Probe = probeRendezvous
	}
	p.buildMain()
	p.buildSelect()
	a.pages.AddPage(pageRendezvous, p.page, true, false)
	a.pages.AddPage(pageRendezvousSelect, p.selectPage, true, false)
	return p
}

func (p *rendezvousPage) buildMain() {
	a := p.a
	text := tview.NewTextView().SetText(rendezvousExplanation).SetWrap(true).SetWordWrap(true)

	p.input = tview.NewInputField().
		SetLabel(rendezvousFieldLabel + " ").
		SetFieldWidth(rendezvousFieldWidth)
	if p.cfg.Prefill.IsValid() {
		p.input.SetText(p.cfg.Prefill.String())
	}
	if a.theme.mono {
		p.input.SetFieldStyle(tcell.StyleDefault.Reverse(true))
	} else {
		p.input.SetFieldStyle(a.theme.selected)
	}
	p.input.SetDoneFunc(func(key tcell.Key) {
		if key == tcell.KeyEnter {
			p.saveTyped()
		}
	})
	inputRow := tview.NewFlex().
		AddItem(nil, 0, 1, false).
		AddItem(p.input, len(rendezvousFieldLabel)+1+rendezvousFieldWidth, 0, true).
		AddItem(nil, 0, 1, false)

	p.save = a.flowButton(buttonSaveRendezvous, p.saveTyped)
	p.thisNode = a.flowButton(buttonThisNode, p.showSelect)
	or := tview.NewTextView().SetText("or").SetTextAlign(tview.AlignCenter)
	separator := tview.NewTextView().SetText(strings.Repeat("─", flowWidth-4)).SetTextAlign(tview.AlignCenter)

	frame := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(text, 4, 0, false).
		AddItem(nil, 1, 0, false).
		AddItem(inputRow, 1, 0, true).
		AddItem(nil, 1, 0, false).
		AddItem(buttonRow(tview.AlignCenter, p.save), 1, 0, false).
		AddItem(nil, 1, 0, false).
		AddItem(or, 1, 0, false).
		AddItem(nil, 1, 0, false).
		AddItem(buttonRow(tview.AlignCenter, p.thisNode), 1, 0, false).
		AddItem(nil, 1, 0, false)
	focus := []tview.Primitive{p.input, p.save, p.thisNode}
	height := 2 + 4 + 9 // borders, text, the rows under it
	if a.cfg.ConfigureNetwork != nil {
		p.configure = a.flowButton(buttonConfigure, a.configureNetwork)
		frame.AddItem(separator, 1, 0, false).
			AddItem(buttonRow(tview.AlignRight, p.configure), 1, 0, false)
		focus = append(focus, p.configure)
		height += 2
	}
	a.theme.frame(frame.Box, rendezvousTitle)
	frame.SetBorderPadding(0, 0, 1, 1)

	p.page = newFlowPage(a, frame, rendezvousHelp, func() int { return height })
	p.page.focusable = focus
	frame.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyTab, tcell.KeyDown:
			p.page.cycle(1)
			return nil
		case tcell.KeyBacktab, tcell.KeyUp:
			p.page.cycle(-1)
			return nil
		}
		return ev
	})
	p.page.beforeDraw = func(int) {
		if !p.prompted {
			p.start()
		}
	}
}

func (p *rendezvousPage) buildSelect() {
	a := p.a
	text := tview.NewTextView().SetText(rendezvousSelectText).SetWrap(true).SetWordWrap(true)
	p.listNote = tview.NewTextView().SetWrap(true)
	p.list = tview.NewList().ShowSecondaryText(false).SetHighlightFullLine(true).
		SetSelectedStyle(a.theme.selected)
	p.list.SetSelectedFunc(func(i int, _, _ string, _ rune) {
		if i >= len(p.addrs) {
			a.goBack()
			return
		}
		p.saveAndConfirm(p.addrs[i], true)
	})
	p.selectFrame = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(text, 2, 0, false).
		AddItem(p.listNote, 0, 0, false).
		AddItem(p.list, 0, 1, true)
	a.theme.frame(p.selectFrame.Box, rendezvousSelectTitle)
	p.selectFrame.SetBorderPadding(0, 0, 1, 1)
	p.selectPage = newFlowPage(a, p.selectFrame, rendezvousSelectHelp, func() int {
		note := 0
		if p.listNote.GetText(false) != "" {
			note = 2
		}
		return 2 + 2 + note + p.list.GetItemCount()
	})
	p.selectPage.focusable = []tview.Primitive{p.list}
	p.setAddrs(nil, nil)
}

// start shows, once, the dialog for an address already set: it goes on
// by itself after a.cfg.Countdown unless the person chooses to modify
// it. The page calls it when first drawn, so that the dialog opens over
// it once the console runs.
func (p *rendezvousPage) start() {
	p.prompted = true
	if !p.cfg.Prefill.IsValid() {
		return
	}
	p.a.goBackground(func(ctx context.Context) {
		p.a.updateUnlessDone(ctx, p.promptPrefilled)
	})
}

func (p *rendezvousPage) promptPrefilled() {
	a := p.a
	if a.current != pageRendezvous || a.dialogOpen() {
		return
	}
	addr := p.cfg.Prefill
	a.countdownDialog(a.cfg.Countdown,
		func(left time.Duration) string { return tview.Escape(prefilledText(addr, left)) },
		[]string{buttonModify, buttonQuit}, buttonQuit,
		func(label string) {
			if label == buttonQuit {
				a.finishStep(pageRendezvous)
			}
		})
}

// saveTyped validates the typed address, probes node zero there in the
// background and then saves it, or warns that it does not answer.
func (p *rendezvousPage) saveTyped() {
	a := p.a
	addr, err := parseRendezvousIP(p.input.GetText())
	if err != nil {
		a.dialog(tview.Escape(err.Error()), []string{buttonBack}, nil)
		return
	}
	ctx, cancel := context.WithCancel(a.ctx)
	checking := a.dialog(tview.Escape(checkingText(addr)), nil, func(string) { cancel() })
	probe, localAddrs := p.cfg.Probe, p.cfg.LocalAddrs
	a.goBackground(func(context.Context) {
		defer cancel()
		pctx, pcancel := context.WithTimeout(ctx, rendezvousProbeLimit)
		perr := probe(pctx, addr)
		pcancel()
		local := isLocalAddr(localAddrs, addr)
		a.updateUnlessDone(ctx, func() {
			if !a.dialogIs(checking) {
				return
			}
			a.onDialogClose = nil // replaced by the outcome's dialog
			if perr != nil {
				a.cfg.Logger.Info("rendezvous node does not answer", "addr", addr, "err", perr)
				p.unreachable(addr)
				return
			}
			p.saveAndConfirm(addr, local)
		})
	})
}

// isLocalAddr reports whether addr is one of this host's.
func isLocalAddr(localAddrs func() ([]netip.Addr, error), addr netip.Addr) bool {
	addrs, err := localAddrs()
	if err != nil {
		return false
	}
	for _, a := range rendezvousCandidates(addrs) {
		if a == addr.WithZone("") {
			return true
		}
	}
	return false
}

// unreachable warns that node zero does not answer at addr; the person
// may save it all the same, go back or configure the network.
func (p *rendezvousPage) unreachable(addr netip.Addr) {
	a := p.a
	buttons := []string{buttonSaveContinue, buttonBack}
	if a.cfg.ConfigureNetwork != nil {
		buttons = append(buttons, buttonConfigure)
	}
	a.dialog(rendezvousUnreachable, buttons, func(label string) {
		switch label {
		case buttonSaveContinue:
			if p.saveOrSay(addr) {
				a.finishStep(pageRendezvous)
			}
		case buttonConfigure:
			a.configureNetwork()
		}
	})
}

// saveAndConfirm saves addr and says so; Continue moves the flow on.
func (p *rendezvousPage) saveAndConfirm(addr netip.Addr, local bool) {
	a := p.a
	if !p.saveOrSay(addr) {
		return
	}
	a.dialog(tview.Escape(savedText(addr, local)), []string{buttonContinue, buttonBack}, func(label string) {
		if label == buttonContinue {
			a.finishStep(pageRendezvous)
		}
	})
}

// saveOrSay saves addr; on failure it says why in a dialog.
func (p *rendezvousPage) saveOrSay(addr netip.Addr) bool {
	if err := saveRendezvousIP(p.cfg.Root, addr); err != nil {
		p.a.cfg.Logger.Error("save rendezvous IP", "addr", addr, "err", err)
		p.a.dialog(tview.Escape(saveErrorText(err)), []string{buttonBack}, nil)
		return false
	}
	p.a.cfg.Logger.Info("saved rendezvous IP", "addr", addr)
	return true
}

// showSelect lists this host's addresses on pageRendezvousSelect.
func (p *rendezvousPage) showSelect() {
	addrs, err := p.cfg.LocalAddrs()
	p.setAddrs(rendezvousCandidates(addrs), err)
	p.a.show(pageRendezvousSelect)
}

// setAddrs fills the select list: the addresses, then <Back>.
func (p *rendezvousPage) setAddrs(addrs []netip.Addr, err error) {
	p.addrs = addrs
	p.list.Clear()
	for _, a := range addrs {
		p.list.AddItem(a.String(), "", 0, nil)
	}
	p.list.AddItem(buttonBack, "", 0, nil)
	switch {
	case err != nil:
		p.listNote.SetText("✖ Could not list this host's addresses: " + errFirstLine(err.Error()))
	case len(addrs) == 0:
		p.listNote.SetText("✖ This host has no address to offer: configure its network first.")
	default:
		p.listNote.SetText("")
	}
	if p.listNote.GetText(false) != "" {
		p.selectFrame.ResizeItem(p.listNote, 2, 0)
	} else {
		p.selectFrame.ResizeItem(p.listNote, 0, 0)
	}
}

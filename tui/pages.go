package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// buildPages makes every page. Each constructor adds its pages to a.pages
// under the page names of app.go; none starts background work.
func (a *App) buildPages() {
	a.checks = newChecksPage(a)       // pageSplash, pageChecks and the countdown dialog
	a.network = newNetworkPage(a)     // pageNetwork
	a.rendez = newRendezvousPage(a)   // pageRendezvous, pageRendezvousSelect
	a.dashboard = newDashboardPage(a) // pageDashboard, pageHost
}

// start begins the pages' background work: the checks every
// CheckInterval, the snapshots every Refresh.
func (a *App) start() {
	if len(a.cfg.Checks) > 0 {
		a.checks.start()
	}
	if a.cfg.Source != nil {
		a.dashboard.start()
	}
}

// globalKeys sees every key before the focused widget: q quits (but not
// while typing into a field), Esc closes a dialog or goes back a page.
// Any key counts as the person having touched the console (touched).
func (a *App) globalKeys(ev *tcell.EventKey) *tcell.EventKey {
	if a.current != pageRendezvous && a.current != pageRendezvousSelect {
		a.touched = true
	}
	if _, typing := a.app.GetFocus().(*tview.InputField); typing {
		return ev
	}
	switch {
	case ev.Key() == tcell.KeyRune && (ev.Rune() == 'q' || ev.Rune() == 'Q'):
		if a.dialogOpen() {
			return ev
		}
		a.app.Stop()
		return nil
	case ev.Key() == tcell.KeyEscape:
		if a.dialogOpen() {
			a.closeDialog()
			return nil
		}
		if a.goBack() {
			return nil
		}
	}
	return ev
}

// dialog shows a modal with text and buttons over the current page; done
// gets the chosen button's label ("" when closed with Esc) after the
// dialog is gone.
func (a *App) dialog(text string, buttons []string, done func(label string)) *tview.Modal {
	m := tview.NewModal().SetText(text).AddButtons(buttons)
	a.theme.modal(m)
	a.onDialogClose = done
	m.SetDoneFunc(func(_ int, label string) {
		a.closeDialogWith(label)
	})
	a.pages.AddPage(pageModal, m, true, true)
	a.app.SetFocus(m)
	return m
}

func (a *App) dialogOpen() bool { return a.pages.HasPage(pageModal) }

// closeDialog closes the open dialog as Esc does.
func (a *App) closeDialog() { a.closeDialogWith("") }

func (a *App) closeDialogWith(label string) {
	if !a.dialogOpen() {
		return
	}
	a.pages.RemovePage(pageModal)
	a.pages.SwitchToPage(a.current)
	done := a.onDialogClose
	a.onDialogClose = nil
	if done != nil {
		done(label)
	}
}

// helpLine is the key help at the bottom of a page.
func (a *App) helpLine(text string) *tview.TextView {
	tv := tview.NewTextView().SetText(text).SetDynamicColors(false)
	a.theme.help(tv)
	return tv
}

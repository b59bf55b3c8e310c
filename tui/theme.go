package tui

import (
	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// theme is the console's look: agent-tui's "newt" colours (blue
// background, gray panels, red titles) on a colour terminal, plain
// attributes on a serial line (Config.Mono), where the selection is
// reverse video and states are told by their symbols (✓ ✖ …), never by
// colour alone.
type theme struct {
	mono bool
	// Styles the pages use for their own cells.
	normal, title, selected, good, bad, pending, dim tcell.Style
}

func newTheme(mono bool) theme {
	if mono {
		d := tcell.StyleDefault
		return theme{mono: true, normal: d, title: d.Bold(true), selected: d.Reverse(true),
			good: d, bad: d.Bold(true), pending: d, dim: d}
	}
	base := tcell.StyleDefault.Background(tcell.ColorSilver).Foreground(tcell.ColorBlack)
	return theme{
		normal:   base,
		title:    base.Foreground(tcell.ColorMaroon).Bold(true),
		selected: tcell.StyleDefault.Background(tcell.ColorNavy).Foreground(tcell.ColorWhite),
		good:     base.Foreground(tcell.ColorGreen),
		bad:      base.Foreground(tcell.ColorMaroon).Bold(true),
		pending:  base.Foreground(tcell.ColorOlive),
		dim:      base.Foreground(tcell.ColorGray),
	}
}

// apply sets tview's global styles. tview keeps them in a package
// variable, so the last console built decides; one process runs one
// console.
func (t theme) apply() {
	if t.mono {
		d := tcell.ColorDefault
		tview.Styles = tview.Theme{
			PrimitiveBackgroundColor: d, ContrastBackgroundColor: d, MoreContrastBackgroundColor: d,
			BorderColor: d, TitleColor: d, GraphicsColor: d, PrimaryTextColor: d,
			SecondaryTextColor: d, TertiaryTextColor: d, InverseTextColor: d, ContrastSecondaryTextColor: d,
		}
		return
	}
	tview.Styles = tview.Theme{
		PrimitiveBackgroundColor:    tcell.ColorSilver,
		ContrastBackgroundColor:     tcell.ColorNavy,
		MoreContrastBackgroundColor: tcell.ColorGray,
		BorderColor:                 tcell.ColorBlack,
		TitleColor:                  tcell.ColorMaroon,
		GraphicsColor:               tcell.ColorBlack,
		PrimaryTextColor:            tcell.ColorBlack,
		SecondaryTextColor:          tcell.ColorMaroon,
		TertiaryTextColor:           tcell.ColorGreen,
		InverseTextColor:            tcell.ColorWhite,
		ContrastSecondaryTextColor:  tcell.ColorWhite,
	}
}

// frame gives a page's box its border and title.
func (t theme) frame(b *tview.Box, title string) {
	b.SetBorder(true).SetTitle(" " + title + " ")
}

// table styles a selectable table.
func (t theme) table(tb *tview.Table) {
	tb.SetSelectedStyle(t.selected)
}

// modal styles a dialog.
func (t theme) modal(m *tview.Modal) {
	if t.mono {
		m.SetButtonStyle(tcell.StyleDefault).SetButtonActivatedStyle(t.selected)
		return
	}
	m.SetBackgroundColor(tcell.ColorSilver).SetTextColor(tcell.ColorBlack)
	m.SetButtonStyle(tcell.StyleDefault.Background(tcell.ColorGray).Foreground(tcell.ColorWhite)).
		SetButtonActivatedStyle(t.selected)
}

// help styles the key help line.
func (t theme) help(tv *tview.TextView) {
	if t.mono {
		tv.SetTextStyle(tcell.StyleDefault.Reverse(true))
		return
	}
	tv.SetTextStyle(tcell.StyleDefault.Background(tcell.ColorNavy).Foreground(tcell.ColorWhite))
}

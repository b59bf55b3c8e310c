// Package tui is the terminal console (tview): it renders snapshots fetched
// over HTTP from the local daemon and never touches state. It imports only
// the wire-types package daemon/v2. (Built in issue #7.)
package tui

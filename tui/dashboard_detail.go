package tui

// The host page's text, the event tail and the wrapping of long lines:
// pure, like the rest of dashboard_render.go.

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/nodezero/nodezero/wire"
)

// hostDetail is the host page's text: status, every validation grouped by
// category (failing first), the inventory summary and the disks.
func hostDetail(p parsedHost, thisHost string, mono bool) []string {
	h := p.Host
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	title := p.Name
	if thisHost != "" && h.ID == thisHost {
		title += " (this host)"
	}
	add("%s", title)
	role := hostRole(h)
	if (h.Role == wire.HostRoleAutoAssign || h.Role == "") && !h.Bootstrap {
		role += " (auto-assigned)"
	}
	line := fmt.Sprintf("Role: %s   Status: %s", role, h.Status)
	if st := hostStage(h); st != "" {
		line += fmt.Sprintf("   Stage: %s %s", st, progressBar(hostPercent(h), 10, mono))
	}
	add("%s", line)
	if h.StatusInfo != "" {
		add("%s", h.StatusInfo)
	}
	// The stage's progress info, unless status_info already says it (a
	// Failed stage's is "Failed - <progress info>").
	if h.Progress != nil && h.Progress.ProgressInfo != "" && !strings.Contains(h.StatusInfo, h.Progress.ProgressInfo) {
		add("Progress: %s", h.Progress.ProgressInfo)
	}
	add("Id: %s", h.ID)

	out = append(out, "", "Validations")
	groups := groupValidations(p.Validations)
	if len(groups) == 0 {
		add("  … none reported yet")
	}
	for _, g := range groups {
		add("  %s", g.Category)
		for _, v := range g.Items {
			add("    %s", validationLine(v, true))
		}
	}

	out = append(out, "", "Inventory")
	inv := p.Inventory
	if inv == nil {
		add("  … not received yet")
		return out
	}
	if sv := inv.SystemVendor; sv != nil {
		s := strings.TrimSpace(sv.Manufacturer + " " + sv.ProductName)
		if sv.Virtual {
			s += " (virtual machine)"
		}
		if sv.SerialNumber != "" {
			s += ", serial " + sv.SerialNumber
		}
		add("  System: %s", s)
	}
	if c := inv.CPU; c != nil {
		s := fmt.Sprintf("%d cores", c.Count)
		if c.ModelName != "" {
			s = c.ModelName + ", " + s
		}
		if c.Architecture != "" {
			s += " (" + c.Architecture + ")"
		}
		add("  CPU: %s", s)
	}
	if m := inv.Memory; m != nil {
		add("  RAM: %s", binaryBytes(m.PhysicalBytes))
	}
	if inv.Boot != nil && inv.Boot.CurrentBootMode != "" {
		add("  Boot: %s", inv.Boot.CurrentBootMode)
	}
	if len(inv.Interfaces) > 0 {
		add("  NICs:")
	}
	for _, nic := range inv.Interfaces {
		if nic == nil {
			continue
		}
		state := "no carrier"
		if nic.HasCarrier {
			state = "up"
		}
		addrs := append(slices.Clone(nic.IPv4Addresses), nic.IPv6Addresses...)
		s := fmt.Sprintf("    %s  %s  mtu %d  %s", nic.Name, nic.MACAddress, nic.MTU, state)
		if len(addrs) > 0 {
			s += "  " + strings.Join(addrs, ", ")
		}
		out = append(out, s)
	}

	out = append(out, "", "Disks")
	if len(inv.Disks) == 0 {
		add("  ✖ none found")
	}
	inst := installDisk(h, inv)
	for _, d := range inv.Disks {
		if d == nil {
			continue
		}
		name := d.Name
		if name == "" {
			name = d.Path
		}
		s := fmt.Sprintf("  %s %-8s %-4s %7s", eligibleSymbol(d), name, d.DriveType, decimalBytes(d.SizeBytes))
		switch {
		case d.InstallationEligibility != nil && d.InstallationEligibility.Eligible:
			s += "  eligible"
		case d.InstallationEligibility != nil && len(d.InstallationEligibility.NotEligibleReasons) > 0:
			s += "  not eligible: " + strings.Join(d.InstallationEligibility.NotEligibleReasons, "; ")
		default:
			s += "  not eligible"
		}
		if d == inst {
			s += " (installation disk)"
		}
		out = append(out, s)
	}
	return out
}

func eligibleSymbol(d *wire.Disk) string {
	if d.InstallationEligibility != nil && d.InstallationEligibility.Eligible {
		return "✓"
	}
	return "✖"
}

// eventLines are the event tail, oldest first so the newest is at the
// bottom: time (UTC), severity, the host's name when the event is about
// one, and the message.
func eventLines(events []*wire.Event, names map[string]string) []string {
	nameWidth := 0
	for _, e := range events {
		if e != nil && e.HostID != nil {
			nameWidth = max(nameWidth, len(eventHost(e, names)))
		}
	}
	nameWidth = min(nameWidth, 20)
	out := make([]string, 0, len(events))
	for _, e := range events {
		if e == nil {
			continue
		}
		host := ""
		if e.HostID != nil {
			host = eventHost(e, names)
		}
		line := fmt.Sprintf("%s %-8s ", e.EventTime.Time().UTC().Format(time.TimeOnly), e.Severity)
		if nameWidth > 0 {
			line += fmt.Sprintf("%-*s ", nameWidth, host)
		}
		out = append(out, line+oneLine(e.Message))
	}
	return out
}

func eventHost(e *wire.Event, names map[string]string) string {
	if n, ok := names[*e.HostID]; ok {
		return n
	}
	if len(*e.HostID) > 8 {
		return (*e.HostID)[:8]
	}
	return *e.HostID
}

// oneLine folds a message's line breaks into spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// wrapText breaks each line of lines to at most width cells at spaces,
// indenting the continuation lines two cells past the line's own indent
// (under the text after a "✖ " symbol). width <= 0 leaves lines as they
// are. Cells are counted as runes: the console's symbols are one cell wide.
func wrapText(lines []string, width int) []string {
	if width <= 0 {
		return lines
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, wrapLine(l, width)...)
	}
	return out
}

func wrapLine(s string, width int) []string {
	if utf8.RuneCountInString(s) <= width {
		return []string{s}
	}
	indent := len(s) - len(strings.TrimLeft(s, " "))
	hang := strings.Repeat(" ", min(indent+2, width/2))
	var out []string
	line, n, empty := s[:indent], indent, true // n: cells in line; empty: no word yet
	rest := s[indent:]
	for rest != "" {
		// The next word with the spaces before it, kept as written
		// ("Role: master   Status") except at a break.
		word := strings.TrimLeft(rest, " ")
		gap := len(rest) - len(word)
		if end := strings.IndexByte(word, ' '); end >= 0 {
			word = word[:end]
		}
		rest = rest[gap+len(word):]
		if word == "" {
			break
		}
		w := utf8.RuneCountInString(word)
		if !empty && n+gap+w > width {
			out = append(out, line)
			line, n, empty = hang, len(hang), true
		}
		if !empty {
			line += strings.Repeat(" ", gap)
			n += gap
		}
		for n+w > width { // a word longer than a line: cut it
			r := []rune(word)
			cut := max(1, width-n)
			out = append(out, line+string(r[:cut]))
			word, w = string(r[cut:]), w-cut
			line, n = hang, len(hang)
		}
		line += word
		n += w
		empty = false
	}
	return append(out, line)
}

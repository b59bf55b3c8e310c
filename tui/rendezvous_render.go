package tui

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"text/template"
	"time"

	"github.com/nodezero/nodezero/onhost"
)

// The rendezvous pages' texts, agent-tui's (docs/reference/abi-on-host.md
// §12.4).
const (
	rendezvousTitle       = "Rendezvous node setup"
	rendezvousSelectTitle = "Rendezvous node IP selection"
	rendezvousExplanation = "The rendezvous node will be the one managing your cluster installation and " +
		"where you'll be able to configure all cluster settings.\n\n" +
		"I've already obtained the rendezvous IP from another node."
	rendezvousSelectText = "Select an IP address from this node to be the rendezvous node IP."
	rendezvousFieldLabel = "Rendezvous IP"
	rendezvousFieldWidth = 55
	rendezvousHelp       = "Tab/Up/Down move   Enter select   q quit (outside the field)"
	rendezvousSelectHelp = "Up/Down move   Enter select   Esc back   q quit"

	buttonSaveRendezvous = "<Save rendezvous IP>"
	buttonThisNode       = "<This is the rendezvous node>"
	buttonBack           = "<Back>"
	buttonContinue       = "<Continue>"
	buttonSaveContinue   = "<Save and Continue>"
	buttonModify         = "<Modify>"

	rendezvousUnreachable = "Warning: the specified rendezvous IP was not found or yet active."
)

// parseRendezvousIP checks what the person typed. An address that cannot
// be a node's (unspecified, multicast) is refused like text that is not an
// address.
func parseRendezvousIP(text string) (netip.Addr, error) {
	text = strings.TrimSpace(text)
	addr, err := netip.ParseAddr(text)
	if err != nil || addr.IsUnspecified() || addr.IsMulticast() {
		if text == "" {
			text = "<blank>"
		}
		return netip.Addr{}, errors.New(invalidIPText(text))
	}
	return addr.Unmap(), nil
}

func invalidIPText(text string) string {
	return fmt.Sprintf("The IP address %s is not a valid IPv4 or IPv6 address", text)
}

func checkingText(addr netip.Addr) string {
	return fmt.Sprintf("Checking connectivity to %s", addr)
}

// savedText is the success dialog's text; on the rendezvous node itself
// it says to enter the address on the other nodes.
func savedText(addr netip.Addr, local bool) string {
	s := fmt.Sprintf("Successfully saved %s as the rendezvous node IP.", addr)
	if local {
		s += fmt.Sprintf(" Enter %s as the rendezvous node IP on the other nodes that will form the cluster.", addr)
	}
	return s
}

func saveErrorText(err error) string {
	return fmt.Sprintf("Error saving rendezvous IP address to %s: %v", onhost.RendezvousEnvPath, err)
}

// prefilledText is the dialog shown when the address is already set,
// with the seconds left before it goes on by itself.
func prefilledText(addr netip.Addr, left time.Duration) string {
	return fmt.Sprintf("Rendezvous IP has been set to %s.\n\n"+
		"Press <Modify> to change it, or <Quit> to exit.\n\n"+
		"This prompt will automatically exit in %s.", addr, secondsLeft(left))
}

// rendezvousCandidates are the addresses this host can offer as the
// rendezvous IP: no loopback, link-local, unspecified or multicast ones;
// IPv4 first, then IPv6, each in the given order, without repeats.
func rendezvousCandidates(addrs []netip.Addr) []netip.Addr {
	var v4, v6 []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		if !a.IsValid() || seen[a] || a.IsLoopback() || a.IsLinkLocalUnicast() ||
			a.IsUnspecified() || a.IsMulticast() {
			continue
		}
		seen[a] = true
		if a.Is4() {
			v4 = append(v4, a)
		} else {
			v6 = append(v6, a)
		}
	}
	return append(v4, v6...)
}

// renderRendezvousEnv renders the env file's template with the address
// as .RendezvousIP; no template at all gives "NODE_ZERO_IP=<addr>".
func renderRendezvousEnv(tmpl []byte, addr netip.Addr) ([]byte, error) {
	if tmpl == nil {
		return []byte("NODE_ZERO_IP=" + addr.String() + "\n"), nil
	}
	t, err := template.New("rendezvous-host.env").Option("missingkey=error").Parse(string(tmpl))
	if err != nil {
		return nil, fmt.Errorf("parse template: %w", err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, struct{ RendezvousIP string }{addr.String()}); err != nil {
		return nil, fmt.Errorf("render template: %w", err)
	}
	return b.Bytes(), nil
}

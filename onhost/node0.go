package onhost

import (
	"bufio"
	"bytes"
	"strings"
)

// Node0 is /etc/assisted/node0's content: this host is the rendezvous
// host, and mac makes it the bootstrap host.
func Node0(mac string) []byte {
	return []byte("# This host is the rendezvous host (node zero): it runs the assisted\n" +
		"# service for the cluster. BOOTSTRAP_HOST_MAC makes it the bootstrap host.\n" +
		"BOOTSTRAP_HOST_MAC=" + mac + "\n")
}

// ParseNode0 returns the bootstrap MAC of a node0 file ("" when it names
// none).
func ParseNode0(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "BOOTSTRAP_HOST_MAC="); ok {
			return v
		}
	}
	return ""
}

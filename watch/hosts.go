package watch

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// StatusCount counts the hosts in status st.
func StatusCount(hosts wire.HostList, st wire.HostStatus) int {
	n := 0
	for _, h := range hosts {
		if h != nil && h.Status == st {
			n++
		}
	}
	return n
}

// StatusHistogram is "known 980, insufficient 20": how many hosts are in
// each status, sorted by status; "no hosts" for none.
func StatusHistogram(hosts wire.HostList) string {
	m := map[wire.HostStatus]int{}
	for _, h := range hosts {
		if h != nil {
			m[h.Status]++
		}
	}
	if len(m) == 0 {
		return "no hosts"
	}
	var parts []string
	for st, n := range m {
		parts = append(parts, fmt.Sprintf("%s %d", st, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

package netcheck

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/nodezero/nodezero/testbed"
	"github.com/nodezero/nodezero/wire"
)

// BenchmarkConnectivityRound: one connectivity-check round from one host
// to all the others of a bed of N hosts in network namespaces, with the
// default probes (10 echoes and 10 ARP requests per peer address, 100 ms
// apart, peers 8 at a time). Reports the round's wall time and the probes
// it sent. Needs root (make bench as root).
func BenchmarkConnectivityRound(b *testing.B) {
	for _, n := range []int{5, 50} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			var specs []testbed.HostSpec
			for i := range n {
				specs = append(specs, testbed.HostSpec{Name: fmt.Sprintf("h%d", i), Static: true})
			}
			bed := testbed.NewT(b, testbed.Config{Prefix: benchPrefix(b), Hosts: specs})
			params := wire.ConnectivityCheckParams{}
			for _, h := range bed.Hosts[1:] {
				params = append(params, &wire.ConnectivityCheckHost{HostID: h.Name, Nics: []*wire.ConnectivityCheckNic{
					{Name: h.NIC, MAC: h.MAC.String(), IPAddresses: []string{h.Addr.String()}}}})
			}
			arg, _ := json.Marshal(params)
			var took time.Duration
			var probes int
			b.ResetTimer()
			for range b.N {
				res := run(b, bed.Hosts[0], job{Kind: "connectivity", Arg: string(arg), NilAllow: true}, nil)
				if res.Error != "" {
					b.Fatal(res.Error)
				}
				took += res.Took
				probes += res.ICMP + res.ARP
			}
			b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/round")
			b.ReportMetric(float64(probes)/float64(b.N), "probes/round")
		})
	}
}

func benchPrefix(b *testing.B) netip.Prefix {
	b.Helper()
	p, err := testbed.FreePrefix(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	return p
}

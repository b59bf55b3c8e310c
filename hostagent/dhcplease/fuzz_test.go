package dhcplease

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseLease reads any text as a dhclient lease file: the agent reads
// what dhclient wrote, and the lease the service sends back for renewal.
// Errors say they are about the lease; an accepted lease has a fixed
// IPv4 address and survives String and ParseLease unchanged, the promise
// Lease's doc makes.
func FuzzParseLease(f *testing.F) {
	f.Add("lease {\n  interface \"api\";\n  fixed-address 10.0.0.16;\n  option subnet-mask 255.255.255.0;\n" +
		"  option routers 10.0.0.1;\n  option domain-name-servers 10.0.0.1,10.0.0.2;\n  option dhcp-lease-time 3600;\n" +
		"  option dhcp-message-type 5;\n  option dhcp-server-identifier 10.0.0.1;\n  renew 0 2020/10/25 14:48:38;\n" +
		"  rebind 0 2020/10/25 15:11:32;\n  expire 0 2020/10/25 15:19:02;\n}\n")
	f.Add("lease {\n  fixed-address 10.0.0.17;\n  renew never;\n}\nlease {\n  interface \"ingress\";\n  fixed-address 10.0.0.18;\n  medium \"x\";\n}")
	f.Add("lease { fixed-address ::1; }")
	f.Add("lease { interface \"a\\x7db\"; fixed-address 10.0.0.1; }")
	f.Add("lease {")
	f.Fuzz(func(t *testing.T, text string) {
		l, err := ParseLease(text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "parse lease: ") {
				t.Fatalf("ParseLease error %q does not say what failed", err)
			}
			return
		}
		if !l.Address.Is4() {
			t.Fatalf("ParseLease(%q) accepted address %v", text, l.Address)
		}
		again, err := ParseLease(l.String())
		if err != nil {
			t.Fatalf("ParseLease of its own String %q: %v", l.String(), err)
		}
		if diff := cmp.Diff(l, again, cmp.Comparer(func(a, b Lease) bool { return a.String() == b.String() && a.Interface == b.Interface })); diff != "" {
			t.Fatalf("lease written and read again differs:\n%s", diff)
		}
	})
}

// TestParseLeaseRefusesUnwritableInterface is FuzzParseLease's first
// finding: an interface name String cannot write back was accepted.
func TestParseLeaseRefusesUnwritableInterface(t *testing.T) {
	for _, name := range []string{`a\x7db`, `a;b`, ``, `a b`} {
		text := "lease { interface \"" + name + "\"; fixed-address 10.0.0.1; }"
		if l, err := ParseLease(text); err == nil {
			t.Errorf("ParseLease(%q) = interface %q, want an error", text, l.Interface)
		}
	}
	if l, err := ParseLease(`lease { interface "ens3.100"; fixed-address 10.0.0.1; }`); err != nil || l.Interface != "ens3.100" {
		t.Errorf("ParseLease with interface ens3.100 = %q, %v", l.Interface, err)
	}
}

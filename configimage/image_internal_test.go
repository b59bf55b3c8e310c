package configimage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/onhost"
)

// TestExtractOrder: the rendezvous env file is written last wherever it
// sits in the archive, since its appearance means "configured".
func TestExtractOrder(t *testing.T) {
	ms := []Member{{Path: "/a"}, {Path: onhost.RendezvousEnvPath}, {Path: "/b"}, {Path: "/c"}}
	var got []string
	for _, m := range extractOrder(ms) {
		got = append(got, m.Path)
	}
	if diff := cmp.Diff([]string{"/a", "/b", "/c", onhost.RendezvousEnvPath}, got); diff != "" {
		t.Errorf("extractOrder (-want +got):\n%s", diff)
	}
}

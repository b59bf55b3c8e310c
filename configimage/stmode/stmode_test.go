package stmode

import (
	"io/fs"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, m := range []fs.FileMode{0o644, 0o600, fs.ModeDir | 0o755, fs.ModeSetuid | fs.ModeSticky | 0o700} {
		if got := FromUnix(ToUnix(m)); got != m {
			t.Errorf("FromUnix(ToUnix(%v)) = %v", m, got)
		}
	}
	for u, want := range map[uint32]fs.FileMode{
		IFLNK | 0o777: fs.ModeSymlink | 0o777, IFCHR | 0o600: fs.ModeDevice | fs.ModeCharDevice | 0o600,
		IFBLK: fs.ModeDevice, IFIFO: fs.ModeNamedPipe, IFSOCK: fs.ModeSocket, 0o170000: fs.ModeIrregular,
	} {
		if got := FromUnix(u); got != want {
			t.Errorf("FromUnix(%#o) = %v, want %v", u, got, want)
		}
	}
}

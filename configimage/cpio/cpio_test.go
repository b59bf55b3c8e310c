package cpio_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nodezero/nodezero/configimage/cpio"
)

var testTime = time.Unix(1700000000, 0).UTC()

type member struct {
	Header cpio.Header
	Data   string
}

func sampleMembers() []member {
	return []member{
		{cpio.Header{Name: "/etc/assisted", Mode: fs.ModeDir | 0o755, ModTime: testTime}, ""},
		{cpio.Header{Name: "/etc/assisted/manifests/pull-secret.yaml", Mode: 0o600, ModTime: testTime}, "kind: Secret\n"},
		{cpio.Header{Name: "/usr/local/bin/tool", Mode: 0o755 | fs.ModeSetuid, ModTime: testTime}, "#!/bin/sh\n"},
		{cpio.Header{Name: "/etc/assisted/empty", Mode: 0o644, ModTime: testTime}, ""},
		{cpio.Header{Name: "/etc/assisted/rendezvous-host.env", Mode: 0o644, ModTime: testTime.Add(time.Hour)}, "NODE_ZERO_IP=192.0.2.10\n"},
	}
}

func writeArchive(t testing.TB, members []member) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := cpio.NewWriter(&buf)
	for _, m := range members {
		h := m.Header
		h.Size = int64(len(m.Data))
		if err := w.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, m.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readArchive reads every member; it returns what it read before an error.
func readArchive(data []byte, lim cpio.Limits) ([]member, error) {
	r := cpio.NewReader(bytes.NewReader(data), lim)
	var out []member
	for {
		h, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return out, err
		}
		out = append(out, member{*h, string(b)})
	}
}

func TestRoundTrip(t *testing.T) {
	want := sampleMembers()
	for i := range want {
		want[i].Header.Size = int64(len(want[i].Data))
	}
	got, err := readArchive(writeArchive(t, sampleMembers()), cpio.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// TestExactBytes pins the layout: sequential inodes, one link, caller's
// mtime, the name as given, header+name and data each padded to 4 bytes.
func TestExactBytes(t *testing.T) {
	got := writeArchive(t, []member{
		{cpio.Header{Name: "/etc", Mode: fs.ModeDir | 0o755, ModTime: testTime}, ""},
		{cpio.Header{Name: "/etc/a", Mode: 0o600, ModTime: testTime}, "hi"},
	})
	want := "070701" + "00000001" + "000041ED" + "00000000" + "00000000" + "00000001" + "6553F100" + "00000000" +
		"00000000" + "00000000" + "00000000" + "00000000" + "00000005" + "00000000" + "/etc\x00" + "\x00" +
		"070701" + "00000002" + "00008180" + "00000000" + "00000000" + "00000001" + "6553F100" + "00000002" +
		"00000000" + "00000000" + "00000000" + "00000000" + "00000007" + "00000000" + "/etc/a\x00" + "\x00\x00\x00" +
		"hi\x00\x00" +
		"070701" + "00000000" + "00000000" + "00000000" + "00000000" + "00000001" + "00000000" + "00000000" +
		"00000000" + "00000000" + "00000000" + "00000000" + "0000000B" + "00000000" + "TRAILER!!!\x00" + "\x00\x00\x00"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("archive bytes (-want +got):\n%s", diff)
	}
}

func TestPadding(t *testing.T) {
	for nameLen := 1; nameLen <= 8; nameLen++ {
		for size := 0; size <= 5; size++ {
			name := "/" + strings.Repeat("n", nameLen-1)
			data := strings.Repeat("d", size)
			got := writeArchive(t, []member{{cpio.Header{Name: name, Mode: 0o644, ModTime: testTime}, data}})
			want := round4(110+nameLen+1) + round4(size) + round4(110+11)
			if len(got) != want {
				t.Errorf("name %d bytes, data %d: archive is %d bytes, want %d", nameLen, size, len(got), want)
			}
			back, err := readArchive(got, cpio.Limits{})
			if err != nil || len(back) != 1 || back[0].Header.Name != name || back[0].Data != data {
				t.Errorf("name %d bytes, data %d: read back %+v, %v", nameLen, size, back, err)
			}
		}
	}
}

func round4(n int) int { return (n + 3) &^ 3 }

func TestWriterRefuses(t *testing.T) {
	tests := []struct {
		name string
		h    cpio.Header
	}{
		{"symlink", cpio.Header{Name: "/l", Mode: fs.ModeSymlink | 0o777, ModTime: testTime}},
		{"device", cpio.Header{Name: "/d", Mode: fs.ModeDevice, ModTime: testTime}},
		{"empty name", cpio.Header{Mode: 0o644, ModTime: testTime}},
		{"NUL in name", cpio.Header{Name: "/a\x00b", Mode: 0o644, ModTime: testTime}},
		{"trailer name", cpio.Header{Name: "TRAILER!!!", Mode: 0o644, ModTime: testTime}},
		{"before 1970", cpio.Header{Name: "/a", Mode: 0o644, ModTime: time.Unix(-1, 0)}},
		{"directory with data", cpio.Header{Name: "/a", Mode: fs.ModeDir | 0o755, ModTime: testTime, Size: 1}},
		{"over 4 GiB", cpio.Header{Name: "/a", Mode: 0o644, ModTime: testTime, Size: 1 << 32}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := cpio.NewWriter(io.Discard)
			err := w.WriteHeader(&tc.h)
			var me *cpio.MemberError
			if !errors.As(err, &me) || me.Name != tc.h.Name {
				t.Errorf("WriteHeader = %v, want a *MemberError naming %q", err, tc.h.Name)
			}
		})
	}
	w := cpio.NewWriter(io.Discard)
	if err := w.WriteHeader(&cpio.Header{Name: "/a", Mode: 0o644, Size: 2, ModTime: testTime}); err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("abc")); n != 2 || !errors.Is(err, cpio.ErrWriteTooLong) {
		t.Errorf("Write(3 bytes of 2) = %d, %v, want 2, ErrWriteTooLong", n, err)
	}
	w = cpio.NewWriter(io.Discard)
	if err := w.WriteHeader(&cpio.Header{Name: "/a", Mode: 0o644, Size: 2, ModTime: testTime}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Errorf("Close with 2 data bytes missing = nil, want an error")
	}
}

// raw is a newc member with arbitrary fields, for what the writer refuses.
func raw(magic, name string, mode, nlink uint32, data string, check uint32) string {
	s := fmt.Sprintf("%s%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		magic, 7, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, check)
	s += name + "\x00"
	s += strings.Repeat("\x00", round4(len(s))-len(s))
	return s + data + strings.Repeat("\x00", round4(len(data))-len(data))
}

var rawTrailer = raw("070701", "TRAILER!!!", 0, 1, "", 0)

func TestReaderRefuses(t *testing.T) {
	ok := raw("070701", "/etc/ok", 0o100644, 1, "fine", 0)
	tests := []struct {
		name    string
		archive string
		lim     cpio.Limits
		want    error
		member  string // named by the *MemberError, if any
	}{
		{"symlink", ok + raw("070701", "/etc/link", 0o120777, 1, "/etc/shadow", 0) + rawTrailer, cpio.Limits{}, cpio.ErrSymlink, "/etc/link"},
		{"char device", raw("070701", "/dev/null", 0o020666, 1, "", 0) + rawTrailer, cpio.Limits{}, cpio.ErrDevice, "/dev/null"},
		{"block device", raw("070701", "/dev/sda", 0o060660, 1, "", 0) + rawTrailer, cpio.Limits{}, cpio.ErrDevice, "/dev/sda"},
		{"fifo", raw("070701", "/run/fifo", 0o010644, 1, "", 0) + rawTrailer, cpio.Limits{}, cpio.ErrFIFO, "/run/fifo"},
		{"socket", raw("070701", "/run/sock", 0o140755, 1, "", 0) + rawTrailer, cpio.Limits{}, cpio.ErrSocket, "/run/sock"},
		{"unknown type", raw("070701", "/x", 0o030644, 1, "", 0) + rawTrailer, cpio.Limits{}, cpio.ErrFileType, "/x"},
		{"hard link", raw("070701", "/etc/h", 0o100644, 2, "", 0) + rawTrailer, cpio.Limits{}, cpio.ErrHardLink, "/etc/h"},
		{"member too large", ok + rawTrailer, cpio.Limits{MaxMemberSize: 3}, cpio.ErrTooLarge, "/etc/ok"},
		{"total too large", ok + ok + rawTrailer, cpio.Limits{MaxTotalSize: 7}, cpio.ErrTooLarge, "/etc/ok"},
		{"too many members", ok + ok + rawTrailer, cpio.Limits{MaxMembers: 1}, cpio.ErrTooLarge, "/etc/ok"},
		{"directory with data", raw("070701", "/d", 0o040755, 2, "data", 0) + rawTrailer, cpio.Limits{}, cpio.ErrFormat, "/d"},
		{"bad checksum", raw("070702", "/c", 0o100644, 1, "abc", 1) + rawTrailer, cpio.Limits{}, cpio.ErrChecksum, "/c"},
		{"odc magic", "070707" + ok[6:] + rawTrailer, cpio.Limits{}, cpio.ErrFormat, ""},
		{"not hex", ok[:20] + "zz" + ok[22:] + rawTrailer, cpio.Limits{}, cpio.ErrFormat, ""},
		{"empty name", raw("070701", "", 0o100644, 1, "", 0) + rawTrailer, cpio.Limits{}, cpio.ErrFormat, ""},
		{"NUL inside name", raw("070701", "/a\x00b", 0o100644, 1, "", 0) + rawTrailer, cpio.Limits{}, cpio.ErrFormat, ""},
		{"no trailer", ok, cpio.Limits{}, cpio.ErrTruncated, ""},
		{"empty", "", cpio.Limits{}, cpio.ErrTruncated, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readArchive([]byte(tc.archive), tc.lim)
			if !errors.Is(err, tc.want) {
				t.Fatalf("read = %v, want %v", err, tc.want)
			}
			var me *cpio.MemberError
			if tc.member != "" && (!errors.As(err, &me) || me.Name != tc.member) {
				t.Errorf("read = %v, want a *MemberError naming %q", err, tc.member)
			}
		})
	}
	good := raw("070702", "/c", 0o100644, 1, "abc", 'a'+'b'+'c') + rawTrailer
	if got, err := readArchive([]byte(good), cpio.Limits{}); err != nil || len(got) != 1 || got[0].Data != "abc" {
		t.Errorf("read 070702 with a right checksum = %+v, %v, want /c with abc", got, err)
	}
}

func TestTruncated(t *testing.T) {
	full := writeArchive(t, sampleMembers())
	// The last 3 bytes are the trailer's own padding, which may be absent.
	for n := 0; n < len(full)-3; n++ {
		if _, err := readArchive(full[:n], cpio.Limits{}); !errors.Is(err, cpio.ErrTruncated) {
			t.Fatalf("archive cut at %d of %d bytes: error %v, want ErrTruncated", n, len(full), err)
		}
	}
}

func TestNextSkipsUnreadData(t *testing.T) {
	r := cpio.NewReader(bytes.NewReader(writeArchive(t, sampleMembers())), cpio.Limits{})
	var names []string
	for {
		h, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
	var want []string
	for _, m := range sampleMembers() {
		want = append(want, m.Header.Name)
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next after the trailer = %v, want io.EOF", err)
	}
}

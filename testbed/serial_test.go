package testbed

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// OVMF's first lines as they reach the serial log: screen escapes, CRLF.
const ovmfSerial = "\x1b[2J\x1b[01;01H\x1b[=3h\x1b[2J\x1b[01;01HBdsDxe: loading Boot0001 \"EFI Internal Shell\" from Fv(7CB8)\r\n" +
	"BdsDxe: starting Boot0001 \"EFI Internal Shell\" from Fv(7CB8)\r\n" +
	"\x1b[1m\x1b[33m\x1b[40mMapping table\x1b[0m\r\n"

func TestSerialScanner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "serial.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	write := func(s string) {
		t.Helper()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var s serialScanner
	step := func(re string) (string, int64, bool) {
		t.Helper()
		if err := s.readFrom(r); err != nil {
			t.Fatal(err)
		}
		return s.match(regexp.MustCompile(re))
	}

	write(ovmfSerial)
	line, next, ok := step(`^BdsDxe: starting Boot(\d+)`)
	wantNext := int64(len(ovmfSerial) - len("\x1b[1m\x1b[33m\x1b[40mMapping table\x1b[0m\r\n"))
	if !ok || line != `BdsDxe: starting Boot0001 "EFI Internal Shell" from Fv(7CB8)` || next != wantNext {
		t.Errorf("match = %q, %d, %v; want the second line without escapes or CR, next %d", line, next, ok, wantNext)
	}
	if _, _, ok := step(`^Mapping table$`); !ok {
		t.Error("the escaped line does not match ^Mapping table$")
	}

	// A line in pieces: a prompt without its newline matches as it is.
	write("\r\nvmguest log")
	if _, _, ok := step(`login: `); ok {
		t.Error("matched half a prompt")
	}
	write("in: ")
	line, next, ok = step(`login: `)
	if !ok || line != "vmguest login: " || next != int64(len(ovmfSerial)+len("\r\nvmguest login: ")) {
		t.Errorf("prompt = %q, %d, %v; want \"vmguest login: \" ending the log", line, next, ok)
	}
	if _, _, ok := step(`nothing like this`); ok {
		t.Error("matched a line that is not there")
	}
	if len(s.buf) > len("vmguest login: ") {
		t.Errorf("the scanner keeps %d bytes: lines that did not match were not dropped", len(s.buf))
	}
}

func TestWaitSerialOff(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "serial.log")
	first := "SERIAL-HELLO root=/dev/vda2 marker=none \r\n"
	second := "SERIAL-HELLO root=/dev/vdb2 marker=INSTALLED \r\n"
	if err := os.WriteFile(log, []byte(first+"reboot: Restarting system\r\n"+second), 0o644); err != nil {
		t.Fatal(err)
	}
	// A VM that is off: what the log holds is all there is.
	v := &VM{Name: "off", plan: vmPlan{serial: log}, changed: make(chan struct{})}
	re := regexp.MustCompile(`SERIAL-HELLO .* marker=(\S+) `)
	line, next, err := v.WaitSerialFrom(t.Context(), 0, re)
	if err != nil || re.FindStringSubmatch(line)[1] != "none" || next != int64(len(first)) {
		t.Fatalf("WaitSerialFrom(0) = %q, %d, %v; want the first boot's line, next %d", line, next, err, len(first))
	}
	line, _, err = v.WaitSerialFrom(t.Context(), next, re)
	if err != nil || re.FindStringSubmatch(line)[1] != "INSTALLED" {
		t.Errorf("WaitSerialFrom(%d) = %q, %v; want the second boot's line", next, line, err)
	}
	if _, err := v.WaitSerial(t.Context(), regexp.MustCompile(`login:`)); !errors.Is(err, ErrVMNotRunning) {
		t.Errorf("WaitSerial for a line never written by a VM that is off = %v, want ErrVMNotRunning", err)
	}
}

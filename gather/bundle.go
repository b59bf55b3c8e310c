package gather

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"strings"
	"time"
)

// Status says what became of one item of the bundle.
type Status string

// Statuses of an item, as the manifest shows them.
const (
	StatusOK       Status = "ok"        // collected
	StatusMissing  Status = "missing"   // the file or directory does not exist on this host
	StatusNotFound Status = "not found" // the command is not installed
	StatusFailed   Status = "failed"    // it exists but could not be read, or the command failed
	StatusSkipped  Status = "skipped"   // not collected on this host, on purpose
)

// Item is one line of the manifest.
type Item struct {
	Name   string // the entry's name in the bundle, or what was looked for
	Status Status
	Detail string
}

// Report is what a gather did, item by item, in the order of the bundle.
type Report struct {
	Items []Item
}

// Count returns how many items have status s.
func (r *Report) Count(s Status) int {
	n := 0
	for _, it := range r.Items {
		if it.Status == s {
			n++
		}
	}
	return n
}

// Summary is one line: how many items of each status.
func (r *Report) Summary() string {
	var parts []string
	for _, s := range []Status{StatusOK, StatusMissing, StatusNotFound, StatusFailed, StatusSkipped} {
		if n := r.Count(s); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, s))
		}
	}
	return strings.Join(parts, ", ")
}

// ManifestName is the manifest's entry name in the bundle's directory.
const ManifestName = "MANIFEST.txt"

// bundle is the tar.gz being written. Every entry's content goes through
// the Redactor's Text pass on its way in: nothing reaches the archive
// without it.
type bundle struct {
	dir   string // every entry sits under it
	mtime time.Time
	red   *Redactor
	zw    *gzip.Writer
	tw    *tar.Writer
	rep   Report
	names map[string]bool
	err   error // the first write error: the bundle is lost
}

func newBundle(w io.Writer, dir string, mtime time.Time, red *Redactor) *bundle {
	zw := gzip.NewWriter(w)
	return &bundle{dir: dir, mtime: mtime, red: red, zw: zw, tw: tar.NewWriter(zw), names: map[string]bool{}}
}

func (b *bundle) note(name string, s Status, format string, a ...any) {
	b.rep.Items = append(b.rep.Items, Item{Name: name, Status: s, Detail: fmt.Sprintf(format, a...)})
}

// add writes an entry after the Text pass and notes it as collected;
// redacted is what the format pass before it removed. Content with a NUL
// byte is not text and is left out.
func (b *bundle) add(name string, data []byte, redacted int, detail string) {
	if bytes.IndexByte(data, 0) >= 0 {
		b.note(name, StatusSkipped, "binary content, not collected")
		return
	}
	data, n := b.red.Text(data)
	redacted += n
	if b.write(name, data) != nil {
		return
	}
	d := fmt.Sprintf("%d bytes", len(data))
	if detail != "" {
		d += ", " + detail
	}
	if redacted > 0 {
		d += fmt.Sprintf(", %d secret(s) redacted", redacted)
	}
	b.note(name, StatusOK, "%s", d)
}

// write puts one regular file into the archive, once per name.
func (b *bundle) write(name string, data []byte) error {
	if b.err != nil {
		return b.err
	}
	if b.names[name] {
		return nil
	}
	b.names[name] = true
	hdr := &tar.Header{
		Name: path.Join(b.dir, name), Mode: 0o644, Size: int64(len(data)),
		ModTime: b.mtime, Typeflag: tar.TypeReg, Format: tar.FormatPAX,
	}
	if err := b.tw.WriteHeader(hdr); err != nil {
		b.err = fmt.Errorf("write bundle: %w", err)
		return b.err
	}
	if _, err := b.tw.Write(data); err != nil {
		b.err = fmt.Errorf("write bundle: %w", err)
		return b.err
	}
	return nil
}

// close writes the manifest and ends the archive.
func (b *bundle) close(header string) error {
	var m strings.Builder
	m.WriteString(header)
	m.WriteString("\n")
	for _, it := range b.rep.Items {
		// The detail goes in parentheses: "name: 402 bytes" would read as
		// a key and its value to the Text pass.
		line := fmt.Sprintf("%-10s%s", it.Status, it.Name)
		if it.Detail != "" {
			line += " (" + it.Detail + ")"
		}
		m.WriteString(line + "\n")
	}
	fmt.Fprintf(&m, "\n%s\n", b.rep.Summary())
	data, _ := b.red.Text([]byte(m.String()))
	if err := b.write(ManifestName, data); err != nil {
		return err
	}
	if err := b.tw.Close(); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	if err := b.zw.Close(); err != nil {
		return fmt.Errorf("write bundle: %w", err)
	}
	return nil
}

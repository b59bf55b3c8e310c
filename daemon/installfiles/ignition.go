package installfiles

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	ignerrors "github.com/coreos/ignition/v2/config/shared/errors"
	"github.com/coreos/ignition/v2/config/v3_5"

	"github.com/nodezero/nodezero/configimage/report"
)

// ignitionVersion is the spec the built-in generator writes: the newest
// stable one whose parser every supported RHCOS carries.
const ignitionVersion = "3.4.0"

// The few Ignition fields the generator writes. The library's types would
// marshal every empty section; these give a config a person can read, and
// Check parses the result with the library anyway.
type ignConfig struct {
	Ignition ignHeader   `json:"ignition"`
	Passwd   *ignPasswd  `json:"passwd,omitempty"`
	Storage  *ignStorage `json:"storage,omitempty"`
	Systemd  *ignSystemd `json:"systemd,omitempty"`
}

type ignSystemd struct {
	Units []ignUnit `json:"units"`
}

type ignUnit struct {
	Name     string `json:"name"`
	Enabled  bool   `json:"enabled"`
	Contents string `json:"contents"`
}

type ignHeader struct {
	Version string `json:"version"`
}

type ignPasswd struct {
	Users []ignUser `json:"users"`
}

type ignUser struct {
	Name              string   `json:"name"`
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
}

type ignStorage struct {
	Files []ignFile `json:"files,omitempty"`
}

type ignFile struct {
	Path      string      `json:"path"`
	Overwrite bool        `json:"overwrite"`
	Mode      int         `json:"mode"`
	Contents  ignResource `json:"contents"`
}

type ignResource struct {
	Source string `json:"source"`
}

// file is a file with its whole content inline, replacing whatever the
// image has at path.
func file(path string, mode int, content []byte) ignFile {
	return ignFile{
		Path:      path,
		Overwrite: true,
		Mode:      mode,
		Contents:  ignResource{Source: "data:;base64," + base64.StdEncoding.EncodeToString(content)},
	}
}

// renderConfig makes an Ignition 3.4.0 config with the core user's keys,
// the files and the units; a later file with the path of an earlier one
// replaces it.
func renderConfig(sshKeys []string, files []ignFile, units ...ignUnit) ([]byte, error) {
	cfg := ignConfig{Ignition: ignHeader{Version: ignitionVersion}}
	if len(sshKeys) > 0 {
		cfg.Passwd = &ignPasswd{Users: []ignUser{{Name: "core", SSHAuthorizedKeys: sshKeys}}}
	}
	var kept []ignFile
	for _, f := range files {
		kept = dropPath(kept, f.Path, func(g ignFile) string { return g.Path })
		kept = append(kept, f)
	}
	if len(kept) > 0 {
		cfg.Storage = &ignStorage{Files: kept}
	}
	if len(units) > 0 {
		cfg.Systemd = &ignSystemd{Units: units}
	}
	return marshalJSON(cfg)
}

func dropPath[T any](list []T, path string, pathOf func(T) string) []T {
	out := list[:0]
	for _, e := range list {
		if pathOf(e) != path {
			out = append(out, e)
		}
	}
	return out
}

// hostConfig is a host's whole config: the role config plus its hostname
// and host id. It works on the raw JSON, so an installer-made config keeps
// its spec version and every field this package does not know.
func hostConfig(role []byte, h host) ([]byte, error) {
	if len(role) == 0 {
		return nil, fmt.Errorf("no %s to build on", h.roleFile())
	}
	return addFiles(role, []ignFile{
		file("/etc/hostname", 0o644, []byte(h.hostname+"\n")),
		file("/etc/nodezero/host-id", 0o644, []byte(h.id+"\n")),
	})
}

// addFiles appends files to storage.files of a spec 3 config, replacing
// entries with the same path (Ignition rejects duplicates).
func addFiles(raw []byte, files []ignFile) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var cfg map[string]any
	if err := dec.Decode(&cfg); err != nil || cfg == nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	storage, ok := cfg["storage"].(map[string]any)
	if !ok {
		if cfg["storage"] != nil {
			return nil, errors.New("storage is not an object")
		}
		storage = map[string]any{}
		cfg["storage"] = storage
	}
	list, ok := storage["files"].([]any)
	if !ok && storage["files"] != nil {
		return nil, errors.New("storage.files is not a list")
	}
	pathOf := func(e any) string {
		m, _ := e.(map[string]any)
		p, _ := m["path"].(string)
		return p
	}
	for _, f := range files {
		list = dropPath(list, f.Path, pathOf)
		b, err := json.Marshal(f)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		list = append(list, m)
	}
	storage["files"] = list
	return marshalJSON(cfg)
}

// marshalJSON is json.Marshal without HTML escaping, so that '<', '>' and
// '&' in paths, keys and URLs stay as they are.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// CheckError says why an Ignition config does not parse: every fatal entry
// of Ignition's report, first one first, as report entries: File is the
// config's name, Path Ignition's JSON path ("$.storage.files.0.path"),
// Line and Column 0 when Ignition gave no position.
type CheckError struct {
	File     string
	Problems []report.Entry
	// Err is Ignition's verdict, e.g. errors.ErrInvalid ("config is not
	// valid") or errors.ErrUnknownVersion from config/shared/errors.
	Err error
}

func (e *CheckError) Error() string {
	if len(e.Problems) == 0 {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return (&report.Invalid{Entries: e.Problems}).Error()
}

func (e *CheckError) Unwrap() error { return e.Err }

// Check parses an Ignition config as Ignition 3.0 to 3.5 parses it and
// returns a *CheckError naming the file, the JSON path and the line and
// column of each fatal problem. Warnings (an unknown key) do not fail it.
func Check(name string, ign []byte) error {
	_, rpt, err := v3_5.ParseCompatibleVersion(ign)
	if err == nil {
		return nil
	}
	ce := &CheckError{File: name, Err: err}
	for _, e := range rpt.Entries {
		if !e.Kind.IsFatal() {
			continue
		}
		p := report.Entry{File: name, Path: e.Context.String(), Message: e.Message}
		if s := e.Marker.StartP; s != nil {
			p.Line, p.Column = int(s.Line), int(s.Column)
			if p.Line == 0 {
				// Ignition leaves the position unset at the very end of
				// the input (a truncated config).
				p.Line, p.Column = lineCol(ign, s.Index)
			}
		}
		ce.Problems = append(ce.Problems, p)
	}
	if len(ce.Problems) == 0 {
		// Version errors come without a report: point at the version.
		ce.Problems = []report.Entry{versionProblem(name, ign, err)}
	}
	return ce
}

func versionProblem(name string, raw []byte, err error) report.Entry {
	p := report.Entry{File: name, Path: "$", Message: err.Error()}
	if errors.Is(err, ignerrors.ErrEmpty) {
		return p
	}
	p.Path = "$.ignition.version"
	off, found := locate(raw, "ignition", "version")
	if !found {
		p.Message = "no ignition.version: " + err.Error()
		if off, found = locate(raw, "ignition"); !found {
			p.Path, off = "$", 0
		} else {
			p.Path = "$.ignition"
		}
	} else if errors.Is(err, ignerrors.ErrUnknownVersion) || errors.Is(err, ignerrors.ErrInvalidVersion) {
		var v any
		_ = json.Unmarshal(valueAt(raw, off), &v)
		p.Message = fmt.Sprintf("%v %v: want 3.0.0 to 3.5.0", err, jsonString(v))
	}
	p.Line, p.Column = lineCol(raw, off)
	return p
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// locate returns the byte offset of the value at a path of object keys.
// A key that is not there (or a config that is not JSON) gives false.
func locate(raw []byte, keys ...string) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	for depth, want := range keys {
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return 0, false
		}
		for {
			t, err := dec.Token()
			if err != nil {
				return 0, false
			}
			key, ok := t.(string)
			if !ok {
				return 0, false // the object ended
			}
			if key == want {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, false
			}
		}
		if depth == len(keys)-1 {
			// The value starts after the colon and any space.
			off := dec.InputOffset()
			for off < int64(len(raw)) && strings.IndexByte(" \t\r\n:", raw[off]) >= 0 {
				off++
			}
			return off, true
		}
	}
	return 0, false
}

// valueAt returns the JSON value starting at off.
func valueAt(raw []byte, off int64) []byte {
	var v json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(raw[off:])).Decode(&v); err != nil {
		return nil
	}
	return v
}

// lineCol turns a byte offset into a 1-based line and column, as Ignition
// counts them.
func lineCol(raw []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(raw)))
	before := raw[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off - int64(bytes.LastIndexByte(before, '\n')))
	return line, col
}

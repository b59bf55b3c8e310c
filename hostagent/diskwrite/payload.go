package diskwrite

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/onhost"
)

// DefaultPayloadDir is where the factory image carries its payload.
const DefaultPayloadDir = onhost.PayloadDir

// PayloadFile is the payload's manifest, inside the payload directory.
const PayloadFile = onhost.PayloadFile

// Payload is payload.json: what the factory image installs.
type Payload struct {
	ReleaseImage     string `json:"release_image"`
	OpenshiftVersion string `json:"openshift_version"`
	// Images are images of the release that node zero's service names in
	// the install step (CheckReleaseImages); a payload that serves only as
	// the disk writer's source may leave them out.
	Images ReleaseImages `json:"images,omitzero"`
	OS     Image         `json:"os_image"`
	// Dir is the directory payload.json was read from; OS.File is
	// relative to it. Not part of the file.
	Dir string `json:"-"`
}

// Image describes an OS disk image.
type Image struct {
	// File is the image file, relative to the payload directory. Its
	// compression (gzip, xz, zstd or none) is read from its first bytes.
	File string `json:"file"`
	// SHA256 is the hex sha256 of the decompressed raw image.
	SHA256 string `json:"sha256"`
	// Size is the decompressed raw image's length in bytes.
	Size int64 `json:"size"`
	// IgnitionPartition is the GPT partition name where the image's first
	// boot reads its Ignition config. The shipped image has that partition
	// empty (all zeros).
	IgnitionPartition string `json:"ignition_partition"`
	// EFIPartition, EFILoader and EFILabel are the boot entry the
	// installer gives efibootmgr for the written disk: the ESP's partition
	// number, the loader's path on it (e.g. 1 and \EFI\BOOT\BOOTX64.EFI)
	// and the entry's name. Left out, they are RHCOS's: partition 2, the
	// shim, "Red Hat Enterprise Linux".
	EFIPartition int    `json:"efi_partition,omitzero"`
	EFILoader    string `json:"efi_loader,omitzero"`
	EFILabel     string `json:"efi_label,omitzero"`
}

// ReleaseImages are the release's container images the install step names,
// as a release's image references (ABI takes the first two from the
// release's agent-installer-orchestrator and agent-installer-csr-approver
// images).
type ReleaseImages struct {
	Installer  string `json:"installer"`   // the assisted-installer
	Controller string `json:"controller"`  // the assisted-installer controller
	MCO        string `json:"mco"`         // the machine-config-operator
	MustGather string `json:"must_gather"` // must-gather
	// Agent is the agent image (agent-installer-node-agent); optional.
	Agent string `json:"agent,omitempty"`
}

// imageRefRE is the swagger's pattern for an image reference
// (install_cmd_request.installer_image and the others): the upstream agent
// refuses an install step whose images break it.
var imageRefRE = regexp.MustCompile(`^(([a-zA-Z0-9\-\.]+)(:[0-9]+)?\/)?[a-z0-9\._\-\/@]+[?::a-zA-Z0-9_\-.]+$`)

// CheckReleaseImages checks what node zero's service needs of the payload
// besides the OS image: the release image, its version, and the installer,
// controller, MCO and must-gather images (the agent image only when
// given), each an image reference. Every problem is reported, each naming
// payload.json and the field.
func (p *Payload) CheckReleaseImages() error {
	path := filepath.Join(p.Dir, PayloadFile)
	var errs []error
	field := func(name, v string, optional bool) {
		switch {
		case v == "" && optional:
		case v == "":
			errs = append(errs, fmt.Errorf("%s: %s: missing (node zero names it in every host's install step)", path, name))
		case !imageRefRE.MatchString(v):
			errs = append(errs, fmt.Errorf("%s: %s: %q is not an image reference (registry/repository:tag or @sha256:digest)", path, name, v))
		}
	}
	field("release_image", p.ReleaseImage, false)
	if p.OpenshiftVersion == "" {
		errs = append(errs, fmt.Errorf("%s: openshift_version: missing", path))
	}
	field("images.installer", p.Images.Installer, false)
	field("images.controller", p.Images.Controller, false)
	field("images.mco", p.Images.MCO, false)
	field("images.must_gather", p.Images.MustGather, false)
	field("images.agent", p.Images.Agent, true)
	if len(errs) > 0 {
		return fmt.Errorf("payload for node zero: %w", errors.Join(errs...))
	}
	return nil
}

// ImagePath is the OS image file's path.
func (p *Payload) ImagePath() string {
	return filepath.Join(p.Dir, p.OS.File)
}

// LoadPayload reads dir/payload.json and checks its os_image: every problem
// is reported, each naming the file and the field. release_image,
// openshift_version and images are not checked here: the writer does not
// use them (node zero checks them with CheckReleaseImages). Unknown keys
// are ignored.
func LoadPayload(dir string) (*Payload, error) {
	path := filepath.Join(dir, PayloadFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load payload: %w", err)
	}
	var p Payload
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("load payload: %s", jsonError(path, data, err))
	}
	p.Dir = dir
	var errs []error
	for _, problem := range p.OS.problems() {
		errs = append(errs, fmt.Errorf("%s: %s", path, problem))
	}
	if p.OS.File != "" && filepath.IsLocal(p.OS.File) {
		fi, err := os.Stat(p.ImagePath())
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: os_image.file: %w", path, err))
		case !fi.Mode().IsRegular():
			errs = append(errs, fmt.Errorf("%s: os_image.file: %s is not a regular file", path, p.ImagePath()))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("load payload: %w", errors.Join(errs...))
	}
	return &p, nil
}

// WritePayload writes p as dir/payload.json, atomically: a temporary file,
// fsynced, renamed over the old one, the directory fsynced. p.Dir is
// ignored; p.OS must pass LoadPayload's field checks. The image file may be
// written before or after.
func WritePayload(dir string, p *Payload) error {
	var errs []error
	for _, problem := range p.OS.problems() {
		errs = append(errs, errors.New(problem))
	}
	if len(errs) > 0 {
		return fmt.Errorf("write payload: %w", errors.Join(errs...))
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("write payload: %w", err)
	}
	data = append(data, '\n')
	if err := atomicfile.Write(filepath.Join(dir, PayloadFile), data, 0o644); err != nil {
		return fmt.Errorf("write payload: %w", err)
	}
	return nil
}

// problems lists what is wrong with an Image's fields, as
// "os_image.<field>: <what>".
func (img Image) problems() []string {
	var ps []string
	switch {
	case img.File == "":
		ps = append(ps, "os_image.file: missing")
	case !filepath.IsLocal(img.File):
		ps = append(ps, fmt.Sprintf("os_image.file: %q must be a path inside the payload directory", img.File))
	}
	if err := checkSHA256(img.SHA256); err != nil {
		ps = append(ps, "os_image.sha256: "+err.Error())
	}
	if img.Size <= 0 {
		ps = append(ps, fmt.Sprintf("os_image.size: must be > 0, got %d", img.Size))
	} else if img.Size%sectorSize != 0 {
		ps = append(ps, fmt.Sprintf("os_image.size: %d is not a multiple of %d-byte sectors", img.Size, sectorSize))
	}
	if img.IgnitionPartition == "" {
		ps = append(ps, "os_image.ignition_partition: missing")
	} else if len(encodeName(img.IgnitionPartition)) > nameUnits {
		ps = append(ps, fmt.Sprintf("os_image.ignition_partition: %q is longer than a GPT name (%d UTF-16 units)", img.IgnitionPartition, nameUnits))
	}
	return ps
}

// checkSHA256 accepts 64 hex digits.
func checkSHA256(s string) error {
	if s == "" {
		return errors.New("missing")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%q is not hex", s)
	}
	if len(b) != 32 {
		return fmt.Errorf("%q is %d hex digits, want 64", s, len(s))
	}
	return nil
}

// jsonError places a decoding error at its line and column.
func jsonError(path string, data []byte, err error) string {
	var offset int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
		if typ.Field != "" {
			err = fmt.Errorf("%s: %s is not a %s", typ.Field, typ.Value, typ.Type)
		}
	}
	if offset < 0 || offset > int64(len(data)) {
		return fmt.Sprintf("%s: %v", path, err)
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return fmt.Sprintf("%s:%d:%d: %v", path, line, col, err)
}

package factoryimage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// A production base: an RHCOS or FCOS raw disk image given with --base.
//
// What such a base needs to become a factory image (BaseNeeds, said by the
// command's help too): nodezero in its root filesystem (on an ostree-based
// root, which is read-only but for /etc and /var, under /var, e.g.
// /var/usrlocal/bin, which /usr/local links to), the units under
// /etc/systemd/system with their enablement links, the udev rule under
// /etc/udev/rules.d, and the payload (payload.json and the OS image) under
// /var, since /usr/share is read-only there. RHCOS's root is XFS: laying
// files into it without a mount needs an XFS writer this build does not
// have, so CheckBase checks what it can and refuses.

// BaseNeeds says what a production base needs, for the command's help.
const BaseNeeds = `A production base (an RHCOS or FCOS raw disk image) needs, laid into its root
partition: nodezero in /usr/local/bin (on an ostree root, read-only but for
/etc and /var: /var/usrlocal/bin), the units under /etc/systemd/system with
their enablement links, the udev rule under /etc/udev/rules.d, and the payload
(payload.json and the OS image) under /var. --base checks that the image is a
GPT disk with a root partition; laying nodezero into one is not done yet (its
XFS root cannot be written without a mount), so it is refused after the check.`

// ErrBaseUnsupported: a production base passed the checks but cannot be
// built on yet.
var ErrBaseUnsupported = errors.New("production base images are not supported yet")

// BasePartition is one partition CheckBase found.
type BasePartition struct {
	Number int
	Name   string
	Type   string // GPT type GUID
}

// Partition type GUIDs a base is read by.
const (
	typeESP        = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
	typeRootX86_64 = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"
	typeLinuxData  = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
)

// CheckBase reads a production base's partition table (sfdisk, no mount)
// and says what it found: an error naming the file and what is wrong when
// it is no GPT disk with a root partition, else ErrBaseUnsupported with
// the partitions it would use.
func CheckBase(ctx context.Context, path string) error {
	head := make([]byte, 4)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("factory image: --base: %w", err)
	}
	_, err = f.ReadAt(head, 0)
	f.Close()
	if err != nil {
		return fmt.Errorf("factory image: --base %s: %w", path, err)
	}
	if bytes.Equal(head, []byte("QFI\xfb")) {
		return fmt.Errorf("factory image: --base %s is a qcow2 image; want a raw disk image (qemu-img convert -O raw %s base.raw)", path, path)
	}
	out, err := output(ctx, nil, "sfdisk", "--json", path)
	if err != nil {
		return fmt.Errorf("factory image: --base %s: no partition table: %w", path, err)
	}
	var table struct {
		PartitionTable struct {
			Label      string `json:"label"`
			Partitions []struct {
				Node string `json:"node"`
				Type string `json:"type"`
				Name string `json:"name"`
			} `json:"partitions"`
		} `json:"partitiontable"`
	}
	if err := json.Unmarshal(out, &table); err != nil {
		return fmt.Errorf("factory image: --base %s: read sfdisk's answer: %w", path, err)
	}
	if table.PartitionTable.Label != "gpt" {
		return fmt.Errorf("factory image: --base %s has a %q partition table; want gpt (an RHCOS or FCOS disk image)", path, table.PartitionTable.Label)
	}
	var parts []BasePartition
	root, esp := 0, 0
	for i, p := range table.PartitionTable.Partitions {
		bp := BasePartition{Number: i + 1, Name: p.Name, Type: strings.ToUpper(p.Type)}
		parts = append(parts, bp)
		switch {
		case bp.Type == typeRootX86_64, bp.Name == "root" && bp.Type == typeLinuxData:
			root = bp.Number
		case bp.Type == typeESP:
			esp = bp.Number
		}
	}
	var found []string
	for _, p := range parts {
		found = append(found, fmt.Sprintf("%d %q", p.Number, p.Name))
	}
	switch {
	case root == 0:
		return fmt.Errorf("factory image: --base %s: no root partition (want one named \"root\", as RHCOS and FCOS name it, or of type x86-64 root); partitions: %s", path, strings.Join(found, ", "))
	case esp == 0:
		return fmt.Errorf("factory image: --base %s: no EFI system partition; partitions: %s", path, strings.Join(found, ", "))
	}
	return fmt.Errorf("factory image: --base %s: a GPT disk with root partition %d and EFI system partition %d (partitions: %s): %w; nodezero, its units, its udev rule and the payload would go into partition %d. Build without --base for the Debian 12 factory image",
		path, root, esp, strings.Join(found, ", "), ErrBaseUnsupported, root)
}

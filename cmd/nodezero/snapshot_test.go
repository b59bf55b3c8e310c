package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nodezero/nodezero/wire"
)

// packTree writes dir as a gzip'd tarball, symlinks kept, the way ghw's
// snapshot tool packs a host.
func packTree(t *testing.T, dir, out string) {
	t.Helper()
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := os.Lstat(path)
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(path); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		hdr.Name = rel
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestAgentReadsGHWSnapshot: an agent given only GHW_SNAPSHOT_PATH reports
// the snapshot's hardware.
func TestAgentReadsGHWSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	svc := startService(t, dir, "127.0.0.1:0")
	_, ie := registerCluster(t, ctx, svc)
	tgz := filepath.Join(dir, "worker-1.tgz")
	packTree(t, filepath.Join("..", "..", "testdata", "hw", "worker-1"), tgz)
	start(t, filepath.Join(dir, "agent.log"), []string{"PULL_SECRET_TOKEN=" + svc.token["agent"], "GHW_SNAPSHOT_PATH=" + tgz, "GHW_CHROOT="},
		"agent", "--url", "http://"+svc.addr, "--infra-env-id", ie.ID, "--host-address", "127.0.0.30/8", "--hostname", "snap", "--interval", "1")
	var inv wire.Inventory
	waitFor(t, "the snapshot host's inventory", 30*time.Second, func() (bool, string) {
		hs, err := svc.user.ListHosts(ctx, ie.ID)
		if err != nil || len(hs) == 0 || hs[0].Inventory == "" {
			return false, "no inventory yet"
		}
		return json.Unmarshal([]byte(hs[0].Inventory), &inv) == nil, hs[0].Inventory
	})
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "hw", "worker-1", "sys", "class", "dmi", "id", "product_name"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.SystemVendor == nil || inv.SystemVendor.ProductName != string(trimNL(want)) {
		t.Errorf("system vendor = %+v, want product %q from the snapshot", inv.SystemVendor, trimNL(want))
	}
	if inv.CPU == nil || inv.CPU.Count != 4 {
		t.Errorf("cpu = %+v, want the snapshot's 4 cores", inv.CPU)
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

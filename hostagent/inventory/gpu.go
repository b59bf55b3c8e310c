package inventory

import (
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jaypipes/pcidb"

	"github.com/nodezero/nodezero/wire"
)

// gpuClasses are the PCI class+subclass codes the agent reports as GPUs by
// default (src/inventory/gpu.go): VGA, 3D, other display controllers and
// processing accelerators.
var gpuClasses = []string{"0300", "0302", "0380", "1200"}

// gpus lists PCI functions of a GPU class from Root/sys/bus/pci/devices.
// The agent lists them through ghw.PCI, which fails without a pci.ids
// database; here the IDs come from sysfs, so GPUs are reported either way,
// and names are added when the root has a pci.ids (usr/share/hwdata or
// usr/share/misc, as pcidb searches). Nothing in here can fail the
// inventory.
func (c *collector) gpus() []*wire.GPU {
	entries, err := os.ReadDir(c.host("/sys/bus/pci/devices"))
	if err != nil {
		return nil
	}
	var out []*wire.GPU
	for _, e := range entries {
		dir := path.Join("/sys/bus/pci/devices", e.Name())
		class, err := c.read(dir + "/class")
		class = strings.TrimPrefix(class, "0x")
		if err != nil || len(class) < 4 || !slices.Contains(gpuClasses, class[:4]) {
			continue
		}
		vendor, _ := c.read(dir + "/vendor")
		device, _ := c.read(dir + "/device")
		out = append(out, &wire.GPU{
			Address:  e.Name(),
			VendorID: strings.TrimPrefix(vendor, "0x"),
			DeviceID: strings.TrimPrefix(device, "0x"),
		})
	}
	if len(out) == 0 {
		return nil
	}
	if db := c.pciDB(); db != nil {
		for _, g := range out {
			if v := db.Vendors[g.VendorID]; v != nil {
				g.Vendor = v.Name
			}
			if p := db.Products[g.VendorID+g.DeviceID]; p != nil {
				g.Name = p.Name
			}
		}
	}
	return out
}

// pciDB loads the root's pci.ids, never from the network or a user cache.
func (c *collector) pciDB() *pcidb.PCIDB {
	for _, p := range []string{
		"/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids",
		"/usr/share/hwdata/pci.ids.gz", "/usr/share/misc/pci.ids.gz",
	} {
		fi, err := os.Stat(c.host(p))
		if err != nil || fi.IsDir() {
			continue
		}
		db, err := pciDBs.load(c.host(p), fi.Size(), fi.ModTime())
		if err != nil {
			c.log.Debug("read pci.ids", "path", p, "err", err)
			return nil
		}
		return db
	}
	return nil
}

// pciDBCache keeps parsed pci.ids files: the real one is over a megabyte and
// takes tens of milliseconds to parse, and the inventory runs repeatedly.
type pciDBCache struct {
	mu sync.Mutex
	m  map[pciDBKey]*pcidb.PCIDB
}

type pciDBKey struct {
	path  string
	size  int64
	mtime time.Time
}

var pciDBs pciDBCache

func (pc *pciDBCache) load(p string, size int64, mtime time.Time) (*pcidb.PCIDB, error) {
	key := pciDBKey{p, size, mtime}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if db, ok := pc.m[key]; ok {
		return db, nil
	}
	var db *pcidb.PCIDB
	err := safely("parse pci.ids", func() error {
		var err error
		db, err = pcidb.New(pcidb.WithPath(p), pcidb.WithCachePath(""), &pcidb.WithOption{EnableNetworkFetch: new(false)})
		return err
	})
	if err != nil {
		return nil, err
	}
	if pc.m == nil {
		pc.m = map[pciDBKey]*pcidb.PCIDB{}
	}
	for k := range pc.m {
		if k.path == p {
			delete(pc.m, k) // the file changed; forget the old parse
		}
	}
	pc.m[key] = db
	return db, nil
}

package inventory

import (
	"math"
	"strconv"
	"strings"

	"github.com/jaypipes/ghw"

	"github.com/nodezero/nodezero/wire"
)

// memory follows the agent (src/inventory/memory.go): physical bytes from
// dmidecode, else ghw, else MemTotal; usable bytes are MemTotal. There is no
// dmidecode here, so the method is "ghw" whenever ghw can read the root (ghw
// counts online memory blocks, else falls back to usable memory itself).
func (c *collector) memory() *wire.Memory {
	m := &wire.Memory{UsableBytes: c.memTotal()}
	var info *ghw.MemoryInfo
	err := safely("read memory", func() error {
		var err error
		info, err = ghw.Memory(c.ghwOpts()...)
		return err
	})
	switch {
	case err == nil && info.TotalPhysicalBytes > 0:
		m.PhysicalBytes, m.PhysicalBytesMethod = info.TotalPhysicalBytes, wire.MemoryMethodGhw
	case m.UsableBytes > 0:
		c.log.Debug("read memory with ghw", "err", err)
		m.PhysicalBytes, m.PhysicalBytesMethod = m.UsableBytes, wire.MemoryMethodMeminfo
	}
	return m
}

var unitMultiplier = map[string]int64{
	"bytes": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40, "eb": 1 << 50, "zb": 1 << 60,
}

// memTotal is MemTotal of /proc/meminfo in bytes ("N kB" means KiB).
func (c *collector) memTotal() int64 {
	s, err := c.readRaw("/proc/meminfo")
	if err != nil {
		c.log.Debug("read meminfo", "err", err)
		return 0
	}
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "MemTotal:" {
			continue
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		mul, ok := unitMultiplier[strings.ToLower(f[2])]
		if err != nil || !ok || v < 0 || v > math.MaxInt64/mul {
			return 0 // not a size a machine has: unknown, not negative
		}
		return v * mul
	}
	return 0
}

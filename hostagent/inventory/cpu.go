package inventory

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/wire"
)

// cpuinfo is the part of /proc/cpuinfo the inventory needs.
type cpuinfo struct {
	count     int
	modelName string
	flags     []string
	maxMHz    float64
	vendorID  string
	arch      string // from the file's shape; "" when it does not tell
}

// parseCPUInfo reads the blocks of /proc/cpuinfo. The first block gives the
// model, vendor and flags (x86 "flags", arm64 "Features").
func parseCPUInfo(s string) cpuinfo {
	var ci cpuinfo
	for line := range strings.Lines(s) {
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch key {
		case "processor":
			ci.count++
		case "model name":
			if ci.modelName == "" {
				ci.modelName = value
			}
		case "vendor_id":
			if ci.vendorID == "" {
				ci.vendorID = value
			}
		case "flags", "Features":
			if ci.flags == nil {
				ci.flags = strings.Fields(value)
			}
		case "cpu MHz":
			if f, err := strconv.ParseFloat(value, 64); err == nil && f > ci.maxMHz {
				ci.maxMHz = f
			}
		case "CPU implementer":
			ci.arch = "aarch64"
		case "cpu":
			if strings.HasPrefix(value, "POWER") {
				ci.arch = "ppc64le"
			}
		}
	}
	switch ci.vendorID {
	case "GenuineIntel", "AuthenticAMD", "HygonGenuine", "CentaurHauls", "Shanghai":
		ci.arch = "x86_64"
	case "IBM/S390":
		ci.arch = "s390x"
	}
	return ci
}

// cpu stands in for the agent's `lscpu -J` (src/inventory/cpu.go): CPU(s),
// model name, flags, the highest of the MHz figures and the architecture.
// The architecture comes from the cpuinfo's shape when it tells (x86 vendor
// IDs, arm64 "CPU implementer", s390x, POWER), else from the running binary,
// named as uname -m names it.
func (c *collector) cpu() *wire.CPU {
	s, err := c.readRaw("/proc/cpuinfo")
	if err != nil {
		c.log.Debug("read cpuinfo", "err", err)
	}
	ci := parseCPUInfo(s)
	if ci.count == 0 {
		ci.count = c.countCPUDirs()
	}
	if khz, err := c.read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
		if f, err := strconv.ParseFloat(khz, 64); err == nil && f/1000 > ci.maxMHz {
			ci.maxMHz = f / 1000
		}
	}
	arch := ci.arch
	if arch == "" {
		arch = unameMachine(runtime.GOARCH)
	}
	return &wire.CPU{
		Count:        int64(ci.count),
		ModelName:    ci.modelName,
		Flags:        ci.flags,
		Frequency:    ci.maxMHz,
		Architecture: arch,
	}
}

var cpuDir = regexp.MustCompile(`^cpu[0-9]+$`)

// countCPUDirs counts /sys/devices/system/cpu/cpuN, for cpuinfo formats that
// have no "processor" lines (s390x).
func (c *collector) countCPUDirs() int {
	entries, err := os.ReadDir(c.host("/sys/devices/system/cpu"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if cpuDir.MatchString(e.Name()) {
			n++
		}
	}
	return n
}

// unameMachine names a GOARCH the way the kernel (and lscpu) names it.
func unameMachine(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	case "386":
		return "i686"
	case "arm":
		return "armv7l"
	}
	return goarch // ppc64le, s390x, riscv64 are spelled alike
}

package simagent

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/nodezero/nodezero/wire"
)

// DefaultNetwork is where simulated hosts live: 198.18.0.0/16, part of the
// RFC 2544 benchmarking range, which is never routed. Its first /24 holds
// the gateway and the VIPs; hosts start at the second.
var DefaultNetwork = netip.MustParsePrefix("198.18.0.0/16")

// Offsets inside the network.
const (
	gatewayOffset    = 1
	apiVIPOffset     = 100
	ingressVIPOffset = 101
	firstHostOffset  = 256
)

// ErrNetwork is returned for a network that cannot hold the hosts asked for.
var ErrNetwork = errors.New("unusable simulation network")

// Class is the hardware class of a simulated host.
type Class int

const (
	// Worker has 4 cores, 16 GiB and one 150 GB SSD: above the worker
	// minimum (2 cores, 8 GiB, 100 GB), below the master one.
	Worker Class = iota
	// Master has 8 cores, 32 GiB, a 200 GB NVMe SSD and a 500 GB HDD.
	Master
)

func (c Class) String() string {
	if c == Master {
		return "master"
	}
	return "worker"
}

// Host is the identity and hardware of one simulated host. Everything is
// derived from its index, so a run is reproducible apart from ID.
type Host struct {
	Index    int
	ID       string // a random UUID: unique across runs
	Hostname string
	MAC      string       // locally administered, from the index
	Address  netip.Prefix // in the simulation network, with its length
	Gateway  netip.Addr
	Class    Class
}

// NewHost returns host number index (0-based) of network, of class c.
func NewHost(index int, network netip.Prefix, c Class) (Host, error) {
	if n := MaxHosts(network); index < 0 || index >= n {
		return Host{}, fmt.Errorf("%w: %s holds hosts 0 to %d, not %d", ErrNetwork, network, n-1, index)
	}
	addr, err := offset(network, firstHostOffset+index)
	if err != nil {
		return Host{}, err
	}
	gw, _ := offset(network, gatewayOffset)
	return Host{
		Index:    index,
		ID:       wire.NewRequestID(), // a random version 4 UUID
		Hostname: fmt.Sprintf("sim-%s-%04d", c, index),
		MAC:      mac(0x02, index),
		Address:  netip.PrefixFrom(addr, network.Bits()),
		Gateway:  gw,
		Class:    c,
	}, nil
}

// VIPs returns the API and ingress VIPs of a cluster whose hosts live in
// network: addresses of its first /24 that no host takes.
func VIPs(network netip.Prefix) (api, ingress netip.Addr, err error) {
	if api, err = offset(network, apiVIPOffset); err != nil {
		return api, ingress, err
	}
	ingress, err = offset(network, ingressVIPOffset)
	return api, ingress, err
}

// MaxHosts is how many hosts network holds: all but its first /24 (the
// gateway and the VIPs) and its last (the free addresses steps report).
func MaxHosts(network netip.Prefix) int {
	if !network.Addr().Is4() || network.Bits() > 22 {
		return 0
	}
	return 1<<(32-network.Bits()) - 2*firstHostOffset
}

// offset returns the n-th address of an IPv4 network.
func offset(network netip.Prefix, n int) (netip.Addr, error) {
	network = network.Masked()
	if !network.Addr().Is4() || network.Bits() > 22 {
		return netip.Addr{}, fmt.Errorf("%w: %s: want an IPv4 network of /22 or larger", ErrNetwork, network)
	}
	a, ok := addrAt(network, n)
	if !ok {
		return netip.Addr{}, fmt.Errorf("%w: %s has no address number %d", ErrNetwork, network, n)
	}
	return a, nil
}

// addrAt returns the n-th address of an IPv4 network, the network address
// and the broadcast address excluded.
func addrAt(network netip.Prefix, n int) (netip.Addr, bool) {
	network = network.Masked()
	if !network.Addr().Is4() || n <= 0 || n >= 1<<(32-network.Bits())-1 {
		return netip.Addr{}, false
	}
	b := network.Addr().As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	v += uint32(n)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

func mac(first byte, index int) string {
	return fmt.Sprintf("%02x:00:5e:%02x:%02x:%02x", first, byte(index>>16), byte(index>>8), byte(index))
}

// cpuFlags is a plausible x86-64 server flag set (the inventory's largest
// list after the routes).
var cpuFlags = []string{
	"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "sep", "mtrr", "pge", "mca", "cmov",
	"pat", "pse36", "clflush", "mmx", "fxsr", "sse", "sse2", "ht", "syscall", "nx", "pdpe1gb", "rdtscp", "lm",
	"constant_tsc", "nopl", "xtopology", "cpuid", "pni", "pclmulqdq", "ssse3", "fma", "cx16", "pcid", "sse4_1",
	"sse4_2", "x2apic", "movbe", "popcnt", "aes", "xsave", "avx", "f16c", "rdrand", "lahf_lm", "abm", "avx2",
	"bmi1", "bmi2", "erms", "invpcid", "avx512f", "avx512dq", "rdseed", "adx", "smap", "clflushopt", "sha_ni",
}

const (
	gib = int64(1) << 30
	gb  = int64(1000 * 1000 * 1000)
)

// Inventory returns the host's synthetic inventory: about 2.5 KB of JSON,
// shaped like the one hostagent/inventory collects on a server with two
// NICs (the second without link), a default route and eligible disks.
func (h Host) Inventory() *wire.Inventory {
	cores, mem, product := int64(4), 16*gib, "PowerEdge R450"
	disks := []*wire.Disk{h.disk("sda", wire.DriveTypeSSD, "MZ7LH240HAHQ", 150*gb, "pci-0000:00:17.0-ata-1", "0:0:0:0")}
	if h.Class == Master {
		cores, mem, product = 8, 32*gib, "PowerEdge R650"
		disks = []*wire.Disk{
			h.disk("nvme0n1", wire.DriveTypeSSD, "Dell Ent NVMe AGN RI U.2 200GB", 200*gb, "pci-0000:01:00.0-nvme-1", ""),
			h.disk("sda", wire.DriveTypeHDD, "ST500NM0011", 500*gb, "pci-0000:00:17.0-ata-1", "0:0:0:0"),
		}
	}
	return &wire.Inventory{
		Hostname:     h.Hostname,
		BMCAddress:   "0.0.0.0",
		BMCV6address: "::/0",
		Interfaces: []*wire.Interface{
			{Name: "eno1", MACAddress: h.MAC, IPv4Addresses: []string{h.Address.String()}, IPv6Addresses: []string{},
				Flags: []string{"up", "broadcast", "multicast", "running"}, HasCarrier: true, MTU: 1500,
				SpeedMbps: 25000, Type: "physical", Vendor: "0x8086", Product: "0x158b"},
			{Name: "eno2", MACAddress: mac(0x06, h.Index), IPv6Addresses: []string{},
				Flags: []string{"up", "broadcast", "multicast"}, MTU: 1500, SpeedMbps: -1, Type: "physical",
				Vendor: "0x8086", Product: "0x158b"},
		},
		Disks: disks,
		Boot: &wire.Boot{CurrentBootMode: "uefi", SecureBootState: wire.SecureBootStateEnabled, DeviceType: wire.BootDeviceTypeEphemeral,
			CommandLine: "BOOT_IMAGE=/images/pxeboot/vmlinuz random.trust_cpu=on console=tty0 console=ttyS0,115200n8 ignition.firstboot ignition.platform.id=metal coreos.liveiso=rhcos-9.6.20250523-0\n"},
		SystemVendor: &wire.SystemVendor{Manufacturer: "Dell Inc.", ProductName: product, SerialNumber: fmt.Sprintf("SIM%05d", h.Index)},
		Memory:       &wire.Memory{PhysicalBytes: mem, UsableBytes: mem - mem/64, PhysicalBytesMethod: wire.MemoryMethodGhw},
		CPU: &wire.CPU{Count: cores, Frequency: 2200, Flags: cpuFlags, Architecture: "x86_64",
			ModelName: "Intel(R) Xeon(R) Gold 6338N CPU @ 2.20GHz"},
		GPUs: []*wire.GPU{{VendorID: "102b", DeviceID: "0536", Address: "0000:03:00.0"}},
		Routes: []*wire.Route{
			{Interface: "eno1", Gateway: h.Gateway.String(), Destination: "0.0.0.0", Family: 2, Metric: 100},
			{Interface: "eno1", Destination: h.Address.Masked().Addr().String(), Family: 2, Metric: 100},
		},
		TPMVersion: wire.InventoryTPMVersion20,
	}
}

func (h Host) disk(name string, t wire.DriveType, model string, size int64, byPath, hctl string) *wire.Disk {
	serial := fmt.Sprintf("S%s%06d", name[:2], h.Index)
	id := "/dev/disk/by-id/wwn-0x5000c500" + fmt.Sprintf("%08x", h.Index) + name[:2]
	return &wire.Disk{
		ID: id, ByID: id, ByPath: "/dev/disk/by-path/" + byPath, Name: name, Path: "/dev/" + name,
		DriveType: t, HasUUID: true, Model: model, Serial: serial, SizeBytes: size, HCTL: hctl,
		InstallationEligibility: &wire.DiskInstallationEligibility{Eligible: true},
	}
}

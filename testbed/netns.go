package testbed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// netnsDir is where `ip netns` keeps its named namespaces.
const netnsDir = "/run/netns"

// runIP runs the ip command and returns its stdout; a failure carries the
// arguments and ip's stderr.
func runIP(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ip", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// listNetns returns the names of the named network namespaces.
func listNetns(ctx context.Context) ([]string, error) {
	out, err := runIP(ctx, "-j", "netns", "list")
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(out)) == 0 { // ip prints nothing when there are none
		return nil, nil
	}
	var list []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("ip -j netns list: %w", err)
	}
	names := make([]string, 0, len(list))
	for _, n := range list {
		names = append(names, n.Name)
	}
	return names, nil
}

// quietIPv6 writes the sysctls that make IPv6 in namespace ns quiet and
// instant: no duplicate address detection, no router solicitations. The
// "default" values apply to interfaces made afterwards, so this runs right
// after the namespace is created. A kernel without IPv6 has none of these
// files; that is not an error here.
func quietIPv6(ns string) error {
	settings := []struct{ path, value string }{
		{"/proc/sys/net/ipv6/conf/all/accept_dad", "0"},
		{"/proc/sys/net/ipv6/conf/default/accept_dad", "0"},
		{"/proc/sys/net/ipv6/conf/all/router_solicitations", "0"},
		{"/proc/sys/net/ipv6/conf/default/router_solicitations", "0"},
	}
	return inNetns(ns, func() error {
		for _, s := range settings {
			err := os.WriteFile(s.path, []byte(s.value), 0o644)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("set %s in namespace %s: %w", s.path, ns, err)
			}
		}
		return nil
	})
}

// inNetns runs fn on an OS thread that has joined namespace ns, then puts
// the thread back into the namespace it came from. /proc/sys/net and new
// sockets follow the calling thread's namespace, which is what quietIPv6
// and Host.DialContext rely on.
//
// The thread must survive: a child started with Pdeathsig (Host.Command)
// is killed when the OS thread that forked it exits, and Go may have run
// that fork on this very thread. So the thread is unlocked again once it
// is back home; only if going back fails does it stay locked, and then Go
// ends it with the goroutine rather than reuse it in the wrong namespace.
func inNetns(ns string, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("enter namespace %s: %w", ns, err)
			return
		}
		defer home.Close()
		f, err := os.Open(filepath.Join(netnsDir, ns))
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("open namespace %s: %w", ns, err)
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("enter namespace %s: %w", ns, err)
			return
		}
		err = fn()
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// nsPids returns the processes inside namespace ns.
func nsPids(ctx context.Context, ns string) ([]int, error) {
	out, err := runIP(ctx, "netns", "pids", ns)
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("ip netns pids %s: bad pid %q", ns, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// killNetns kills every process inside namespace ns and, when groups is set,
// the process group each one leads or belongs to, except this process's own
// group. Processes that are already gone are not an error.
func killNetns(ctx context.Context, ns string, groups bool) error {
	pids, err := nsPids(ctx, ns)
	if err != nil {
		return err
	}
	self, own := os.Getpid(), syscall.Getpgrp()
	var errs []error
	for _, pid := range pids {
		if pid == self || pid <= 1 {
			continue
		}
		if groups {
			if pg, err := syscall.Getpgid(pid); err == nil && pg > 1 && pg != own {
				if err := syscall.Kill(-pg, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
					errs = append(errs, fmt.Errorf("kill process group %d in namespace %s: %w", pg, ns, err))
				}
			}
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("kill pid %d in namespace %s: %w", pid, ns, err))
		}
	}
	return errors.Join(errs...)
}

// deleteNetns removes every link but lo from namespace ns (a veth takes its
// peer with it) and then the namespace itself.
func deleteNetns(ctx context.Context, ns string) error {
	links, err := linkNames(ctx, ns)
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range links {
		if l == "lo" {
			continue
		}
		if _, err := runIP(ctx, "-n", ns, "link", "del", "dev", l); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
			errs = append(errs, err)
		}
	}
	if _, err := runIP(ctx, "netns", "del", ns); err != nil {
		errs = append(errs, err)
	}
	// The namespace's own /etc files (resolv.conf for the bed's DNS), which
	// `ip netns exec` mounts over /etc; only ever a bed's.
	if strings.HasPrefix(ns, nsPrefix) {
		if err := os.RemoveAll(filepath.Join(etcNetnsDir, ns)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// etcNetnsDir holds per-namespace /etc files for `ip netns exec`.
const etcNetnsDir = "/etc/netns"

// linkNames lists the interface names in namespace ns.
func linkNames(ctx context.Context, ns string) ([]string, error) {
	out, err := runIP(ctx, "-n", ns, "-j", "link", "show")
	if err != nil {
		return nil, err
	}
	var links []struct {
		Name string `json:"ifname"`
	}
	if err := json.Unmarshal(out, &links); err != nil {
		return nil, fmt.Errorf("ip -n %s -j link show: %w", ns, err)
	}
	names := make([]string, 0, len(links))
	for _, l := range links {
		names = append(names, l.Name)
	}
	return names, nil
}

// ipAddrs is the part of `ip -j addr` a bed reads.
type ipAddrs []struct {
	Name     string `json:"ifname"`
	AddrInfo []struct {
		Local     string `json:"local"`
		PrefixLen int    `json:"prefixlen"`
	} `json:"addr_info"`
}

// prefixes returns every address as a prefix of its subnet length.
func (l ipAddrs) prefixes() ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, link := range l {
		for _, a := range link.AddrInfo {
			addr, err := netip.ParseAddr(a.Local)
			if err != nil {
				return nil, fmt.Errorf("address %q on %s: %w", a.Local, link.Name, err)
			}
			p, err := addr.Prefix(a.PrefixLen)
			if err != nil {
				return nil, fmt.Errorf("address %s/%d on %s: %w", a.Local, a.PrefixLen, link.Name, err)
			}
			out = append(out, netip.PrefixFrom(addr, p.Bits()))
		}
	}
	return out, nil
}

// rootPrefixes reads (and only reads) the root namespace's addresses and the
// destinations of its routes in every table.
func rootPrefixes(ctx context.Context) ([]netip.Prefix, error) {
	out, err := runIP(ctx, "-j", "addr", "show")
	if err != nil {
		return nil, fmt.Errorf("read root namespace addresses: %w", err)
	}
	var addrs ipAddrs
	if err := json.Unmarshal(out, &addrs); err != nil {
		return nil, fmt.Errorf("read root namespace addresses: %w", err)
	}
	used, err := addrs.prefixes()
	if err != nil {
		return nil, fmt.Errorf("read root namespace addresses: %w", err)
	}
	for _, family := range []string{"-4", "-6"} {
		out, err := runIP(ctx, "-j", family, "route", "show", "table", "all")
		if err != nil {
			return nil, fmt.Errorf("read root namespace routes: %w", err)
		}
		dsts, err := routeDsts(out)
		if err != nil {
			return nil, fmt.Errorf("read root namespace routes (ip %s): %w", family, err)
		}
		used = append(used, dsts...)
	}
	return used, nil
}

// routeDsts parses the destinations of `ip -j route` output; "default"
// becomes a /0. An unknown form is an error, not a silent skip: the overlap
// check must not pass by misreading.
func routeDsts(out []byte) ([]netip.Prefix, error) {
	if len(bytes.TrimSpace(out)) == 0 {
		return nil, nil
	}
	var routes []struct {
		Dst string `json:"dst"`
	}
	if err := json.Unmarshal(out, &routes); err != nil {
		return nil, err
	}
	var dsts []netip.Prefix
	for _, r := range routes {
		switch {
		case r.Dst == "default":
			continue
		case strings.Contains(r.Dst, "/"):
			p, err := netip.ParsePrefix(r.Dst)
			if err != nil {
				return nil, fmt.Errorf("route destination %q: %w", r.Dst, err)
			}
			dsts = append(dsts, p)
		default:
			a, err := netip.ParseAddr(r.Dst)
			if err != nil {
				return nil, fmt.Errorf("route destination %q: %w", r.Dst, err)
			}
			dsts = append(dsts, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return dsts, nil
}

// nsExists reports whether the named namespace still exists.
func nsExists(ns string) bool {
	_, err := os.Stat(filepath.Join(netnsDir, ns))
	return err == nil
}

#!/bin/sh
# The rootfs layer's mmdebstrap --customize-hook (factoryimage/rootfs.go):
# run on the build machine as root, with the new root as $1 (mmdebstrap has
# /proc, /sys and /dev mounted inside it) and the kernel modules to keep,
# with their dependencies, as the other arguments. It
#   - prunes the kernel's modules to those (a VM needs a few dozen of the
#     ~4000 Debian ships: 360 MB of the image otherwise),
#   - builds the initramfs from a short module list (MODULES=list, zstd),
#   - enables a getty on the serial console (both images log in there),
#   - leaves no host's name, resolver, machine id, apt lists or logs.
# Every line it prints goes to the build's log.
set -eu
root=$1
shift

kvers=$(ls "$root/usr/lib/modules")
if [ "$(echo "$kvers" | wc -l)" -ne 1 ]; then
	echo "customize: want one kernel in $root/usr/lib/modules, found: $kvers" >&2
	exit 1
fi
kver=$kvers
moddir=$root/usr/lib/modules/$kver

# Keep: each wanted module and what modprobe would load with it (its
# dependencies and soft dependencies), as paths relative to $moddir.
keep=$(mktemp)
trap 'rm -f "$keep" "$keep.all"' EXIT
for m in "$@"; do
	if ! out=$(chroot "$root" modprobe --show-depends --set-version="$kver" "$m" 2>&1); then
		echo "customize: no module $m in kernel $kver (skipped): $out" >&2
		continue
	fi
	echo "$out" | awk '$1 == "insmod" { print $2 }' | sed "s|^.*/modules/$kver/||" >>"$keep"
done
sort -u -o "$keep" "$keep"
(cd "$moddir" && find kernel -name '*.ko*' | sort) >"$keep.all"
before=$(wc -l <"$keep.all")
grep -vxF -f "$keep" "$keep.all" | (cd "$moddir" && xargs -r rm -f)
find "$moddir/kernel" -type d -empty -delete
after=$(cd "$moddir" && find kernel -name '*.ko*' | wc -l)
echo "customize: kernel $kver: kept $after of $before modules"
chroot "$root" depmod -a "$kver"

# The initramfs: only the modules that find and mount the root disk.
mkdir -p "$root/etc/initramfs-tools/conf.d"
printf 'MODULES=list\nCOMPRESS=zstd\n' >"$root/etc/initramfs-tools/conf.d/nodezero.conf"
printf '%s\n' virtio_pci virtio_blk virtio_scsi sd_mod sr_mod ext4 >"$root/etc/initramfs-tools/modules"
chroot "$root" update-initramfs -u -k "$kver"

# A login prompt on the serial line the VMs log (console=ttyS0).
chroot "$root" systemctl enable serial-getty@ttyS0.service

# Nothing of this machine or of this moment: the host's name and resolver
# (mmdebstrap copies them in), apt's lists, logs.
rm -f "$root/etc/hostname" "$root/etc/resolv.conf"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old
find "$root/var/log" -type f -delete

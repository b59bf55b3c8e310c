// Package factoryimage builds the factory disk image (`nodezero create
// factory-image`): the bootable disk every host boots before its install,
// and, inside its payload, the OS image the install writes (the "installed
// OS"). It owns the recipe of both images, the guest files laid only into
// the installed OS (guest/: the first-boot unit that applies the host's
// Ignition config with real Ignition, and the mount of the factory disk),
// and the cache that makes a second build cheap.
//
// Three layers, each cached under Options.Cache by a key that is the
// SHA-256 of all its inputs, so a changed input rebuilds only what depends
// on it:
//
//  1. rootfs: Debian 12 (bookworm) made by mmdebstrap from the Debian
//     mirror (the only network a build uses): systemd, udev,
//     NetworkManager, a kernel pruned to the modules a VM needs, a small
//     initramfs, systemd-boot, the QEMU guest agent, a getty on ttyS0.
//  2. installed OS: rootfs + nodezero + ignition + guest/, as a raw GPT
//     disk (ESP, root "nzroot", an empty 1 MiB partition named
//     "ignition"), zstd-compressed into the payload.
//  3. factory: rootfs + nodezero laid by units.Install (what `nodezero
//     install --root` lays) + the payload at diskwrite.DefaultPayloadDir,
//     as a raw GPT disk (ESP, root "nzfactory") and a zstd qcow2.
//
// Disks are assembled without loop devices or mounts (the facts and
// commands are in docs/reference/vm-testbed-facts.md, step 2): mkfs.ext4
// -d fills the root from a staging tree, mkfs.vfat and mtools the ESP,
// sgdisk writes the table. The same inputs give byte-identical disks:
// partition GUIDs, filesystem UUIDs and seeds derive from the layer's key,
// and every timestamp is SOURCE_DATE_EPOCH.
//
// It imports units (the factory image's units) and hostagent/diskwrite
// (the payload's format) and no composition package
// (docs/architecture.md); it runs mmdebstrap, mkfs.ext4, debugfs,
// mkfs.vfat, mtools, sgdisk and qemu-img, and needs root for mmdebstrap
// and for the image trees' owners.
package factoryimage

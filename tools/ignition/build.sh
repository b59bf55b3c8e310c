#!/usr/bin/env bash
# Puts the ignition binary the factory image's installed OS runs into the
# tools cache, outside the repository (docs/architecture.md), and prints
# where it is:
#   ignition  coreos/ignition built from the github.com/coreos/ignition/v2
#             module pinned in this folder's go.mod (the version the main
#             module's go.mod pins: a factoryimage test holds the two and
#             factoryimage.IgnitionVersion/IgnitionSum equal), through the Go
#             module proxy. Its main package is .../v2/internal, as upstream's
#             build script builds it; CGO_ENABLED=1 because it links libblkid
#             (the build machine needs libblkid-dev and a C compiler; the
#             guest, Debian 12, has libblkid1). Version-stamped, -trimpath,
#             stripped, and set for a Debian guest through the distro knobs
#             upstream provides for packagers (internal/distro): no SELinux
#             relabeling (Debian has no SELinux policy: with it on, the files
#             stage fails at its end opening /etc/selinux/config) and SSH
#             keys in ~/.ssh/authorized_keys, which Debian's sshd reads, not
#             the authorized_keys.d fragment Fedora CoreOS's ssh-key-dir
#             reads. Kept in a folder named by the version, the first 12 hex
#             digits of go.sum's SHA-256 and that flavour ("debian"), so it is
#             rebuilt only when one of them changes (cold: ~3 min).
# The binary is dynamically linked against the build machine's glibc: build
# it on Debian 12 (bookworm), the release the guest runs.
# The cache is $NODEZERO_TOOLS_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/nodezero-tools:
# where factoryimage.FindIgnition looks (NODEZERO_IGNITION names the binary
# instead).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${NODEZERO_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodezero-tools}
mkdir -p "$cache"

cd "$here"
version=$(go list -m -f '{{.Version}}' github.com/coreos/ignition/v2)
sum=$(sha256sum go.sum | cut -c1-12)
dir="$cache/ignition-$version-$sum-debian"
if ! "$dir/ignition" -version 2>/dev/null | grep -qx "Ignition $version"; then
  if [ ! -e /usr/include/blkid/blkid.h ]; then
    echo "ignition links libblkid: install libblkid-dev (apt-get install libblkid-dev)" >&2
    exit 1
  fi
  echo "building ignition $version into $dir (cold: ~3 min)" >&2
  distro=github.com/coreos/ignition/v2/internal/distro
  tmp="$dir.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  CGO_ENABLED=1 go build -trimpath -o "$tmp/ignition" \
    -ldflags "-s -w -X github.com/coreos/ignition/v2/internal/version.Raw=$version -X $distro.selinuxRelabel=false -X $distro.writeAuthorizedKeysFragment=false" \
    github.com/coreos/ignition/v2/internal
  rm -rf "$dir"; mv "$tmp" "$dir"
  trap - EXIT
fi
echo "ignition: $dir/ignition"

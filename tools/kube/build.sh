#!/usr/bin/env bash
# Puts the sandbox's installed-cluster tools into the tools cache, outside the
# repository (docs/architecture.md), and prints where they are:
#   kube-apiserver  built from the k8s.io/kubernetes module pinned in this
#                   folder's go.mod, through the Go module proxy, CGO_ENABLED=0,
#                   -trimpath, version-stamped; kept in a folder named by the
#                   version and go.sum's hash, so it is rebuilt only when the
#                   pin changes (cold: ~700 CPU-s, 1.9 GB of memory)
#   etcd, kubectl   Debian's etcd-server and kubernetes-client, downloaded with
#                   apt-get download and unpacked with dpkg-deb -x: no
#                   maintainer script runs, so no etcd.service starts
# The cache is $NODEZERO_TOOLS_CACHE, else ${XDG_CACHE_HOME:-~/.cache}/nodezero-tools:
# what kube/localapi.FindTools looks at (its env overrides name single binaries).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${NODEZERO_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nodezero-tools}
mkdir -p "$cache"

# kube-apiserver: the key is the pinned version and the first 12 hex digits
# of go.sum's SHA-256 (kube/localapi's APIServerPin holds the same pair; a
# test there checks it against this go.sum).
cd "$here"
version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
sum=$(sha256sum go.sum | cut -c1-12)
dir="$cache/kube-apiserver-$version-$sum"
if ! "$dir/kube-apiserver" --version 2>/dev/null | grep -qx "Kubernetes $version"; then
  echo "building kube-apiserver $version into $dir (cold: ~700 CPU-s)" >&2
  minor=${version#v*.}; minor=${minor%%.*}
  major=${version#v}; major=${major%%.*}
  pkg=k8s.io/component-base/version
  tmp="$dir.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  CGO_ENABLED=0 go build -trimpath -o "$tmp/kube-apiserver" \
    -ldflags "-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean" \
    k8s.io/kubernetes/cmd/kube-apiserver
  rm -rf "$dir"; mv "$tmp" "$dir"
  trap - EXIT
fi

# Debian packages: unpacked into debian/<package>_<version>/, and a stable
# link (etcd, kubectl) names the binary of the version unpacked last.
debian() { # package, path of the binary inside the package, link name
  local pkg=$1 bin=$2 link=$3 ver
  ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | awk '/^Version:/ {print $2; exit}')
  if [ -z "$ver" ] && [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    ver=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null | awk '/^Version:/ {print $2; exit}')
  fi
  if [ -z "$ver" ]; then
    echo "apt-cache knows no $pkg (run apt-get update as root)" >&2
    return 1
  fi
  local d="$cache/debian/${pkg}_$ver"
  if [ ! -x "$d$bin" ]; then
    local tmp
    tmp=$(mktemp -d)
    (cd "$tmp" && apt-get download -q "$pkg=$ver" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true)
    rm -rf "$d.tmp"; mkdir -p "$d.tmp"
    dpkg-deb -x "$tmp"/*.deb "$d.tmp"
    rm -rf "$tmp" "$d"; mv "$d.tmp" "$d"
  fi
  ln -sfn "$d$bin" "$cache/$link"
}
debian etcd-server /usr/bin/etcd etcd
debian kubernetes-client /usr/bin/kubectl kubectl

echo "kube-apiserver: $dir/kube-apiserver"
echo "etcd:           $(readlink "$cache/etcd")"
echo "kubectl:        $(readlink "$cache/kubectl")"

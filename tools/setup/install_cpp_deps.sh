#!/usr/bin/env bash
# Installs what the C++ client (edge/cpp) builds on, where missing: CMake, a C++ compiler, libzmq + cppzmq and
# msgpack-c. Debian/Ubuntu via apt-get (as root, or with sudo); elsewhere it says what to install.
set -euo pipefail
PKGS=(cmake g++ pkg-config libzmq3-dev cppzmq-dev libmsgpack-dev)
say() { printf '[cpp-deps] %s\n' "$*" >&2; }

if ! command -v dpkg-query >/dev/null 2>&1; then
  if [ -f /usr/include/msgpack.h ] && [ -f /usr/include/zmq.hpp ] && command -v cmake >/dev/null 2>&1; then
    exit 0
  fi
  say "not a Debian-like system: install CMake, a C++17 compiler, libzmq, cppzmq and msgpack-c (C) yourself"
  exit 1
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { say "need root to apt-get install ${missing[*]}"; exit 1; }
  SUDO=(sudo)
fi
say "installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

#!/usr/bin/env bash
# Installs the Debian packages the toolchain needs, only when something is missing.
set -euo pipefail
pkgs=(cmake g++ make default-jre-headless antlr4 libantlr4-runtime-dev libcli11-dev libgtest-dev
      libgmock-dev libbenchmark-dev libelf-dev elfutils llvm-14-tools nlohmann-json3-dev clang-14
      libclang-rt-14-dev clang-format-14 python3 llvm-14 lld-14 libtcmalloc-minimal4
      pybind11-dev python3-dev python3-numpy python3-pytest python3-hypothesis universal-ctags
      libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

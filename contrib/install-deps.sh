#!/bin/sh
# Installs what building and testing ptconv needs on Debian 12 (run as root).
# Build: compiler, autotools and the libraries configure checks for.
# Tests: Linux perf and valgrind, the independent oracles; clang for fuzzing;
# llvm for llvm-xray, the reader of -f xray; protobuf-compiler's protoc
# checks that -f perfetto's files are protobuf; gcc-multilib builds the
# 32-bit programs of tests/pt_m32.sh (which skips without it).
set -e
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
	build-essential autoconf automake libtool pkg-config \
	libipt-dev libelf-dev libzstd-dev libtraceevent-dev libzydis-dev \
	libopencsd-dev liblzma-dev zlib1g-dev libxxhash-dev libprotobuf-c-dev protobuf-c-compiler \
	linux-perf valgrind clang libclang-rt-14-dev llvm python3 xz-utils zstd binutils gzip protobuf-compiler \
	gcc-multilib >/dev/null

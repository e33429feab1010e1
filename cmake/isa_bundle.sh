#!/bin/sh
# Makes one relocatable object of the kernels compiled for one instruction set,
# whose symbols are all private to it but its entry points.
#
#   isa_bundle.sh LD NM OBJCOPY ISA OUT OBJECT...
#
# The kernel sources are compiled once per instruction set (cmake/DynetLiteIsa.cmake).
# Each compile defines the same functions, Eigen's template instantiations
# included, and a linker keeps one copy of such a symbol for the whole program:
# an AVX-512 copy could then run on a CPU without AVX-512.  So the objects of one
# set are linked into one (ld -r), and every symbol it defines is renamed with the
# suffix ".ISA" except the entry points (extern "C" names ending in "_ISA"), which
# the dispatcher calls once it has checked the CPU.  Symbols the bundle only uses
# (libc, libstdc++, the rest of dynet_lite) keep their names.
set -eu
ld=$1 nm=$2 objcopy=$3 isa=$4 out=$5
shift 5
tmp="$out.tmp.o"
map="$out.syms"
"$ld" -r -o "$tmp" "$@"
# nm -P: "name type [value size]".  Global and weak definitions (T W V D B R u i)
# and the local names of COMDAT groups of constructors and destructors (n: the
# C5/D5 groups), which the final link would otherwise merge with the baseline's.
"$nm" -P --defined-only "$tmp" | awk -v isa="$isa" '
  $2 ~ /^[TWVDBRuin]$/ {
    if ($1 ~ ("_" isa "$") && $1 !~ /^_Z/) next   # an entry point
    print $1 " " $1 "." isa
  }' > "$map"
"$objcopy" --redefine-syms="$map" "$tmp" "$out"
rm -f "$tmp"

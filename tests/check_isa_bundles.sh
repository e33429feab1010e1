#!/bin/sh
# Checks the per-instruction-set kernel objects (cmake/isa_bundle.sh) for what
# would let their code run on a CPU that lacks the instructions:
#  - a public symbol other than the entry points (the final link could pick it
#    for the whole program), or a COMDAT group the link could merge with the
#    baseline's;
#  - a static initialiser (.init_array / .ctors run on every CPU at load time).
#   check_isa_bundles.sh NM READELF ISA:OBJECT...
set -eu
nm=$1 readelf=$2
shift 2
status=0
for arg in "$@"; do
  isa=${arg%%:*} obj=${arg#*:}
  public=$("$nm" -P --defined-only "$obj" | awk -v isa="$isa" '
    $2 ~ /^[TWVDBRui]$/ && $1 !~ ("\\." isa "$") && !($1 ~ ("_" isa "$") && $1 !~ /^_Z/) { print $1 }')
  if [ -n "$public" ]; then
    echo "$obj: public symbols not private to the $isa kernels:"; echo "$public" | head -20; status=1
  fi
  groups=$("$readelf" -gW "$obj" | sed -n "s/^COMDAT group section .*\[\(.*\)\] contains.*/\1/p" |
    grep -v "\\.$isa\$" || true)
  if [ -n "$groups" ]; then
    echo "$obj: COMDAT groups the final link could merge with the baseline's:"; echo "$groups" | head -20; status=1
  fi
  if "$readelf" -SW "$obj" | grep -Eq '\.(init_array|ctors)'; then
    echo "$obj: has static initialisers, which run on every CPU"; status=1
  fi
  entries=$("$nm" -P --defined-only "$obj" | awk -v isa="$isa" '$1 ~ ("^dynet_lite_.*_" isa "$") { n++ } END { print n + 0 }')
  if [ "$entries" -lt 2 ]; then
    echo "$obj: expected the entry points dynet_lite_*_$isa, found $entries"; status=1
  fi
  echo "$obj: $isa, $entries entry points"
done
exit $status

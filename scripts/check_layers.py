#!/usr/bin/env python3
"""Checks that the library's #include lines point one way.

Layer order, from the top (may include everything below it) to the bottom:

  5  public headers   dynet_lite/*.h  (the API: DyNet's names)
  4  nn/ train/ io/   builders, trainers, saving and loading,
     export/          the ONNX exporter (reads graph nodes, knows the builders)
  3  exec/            plain and batched execution of a graph
  2  ops/             the op table and one file per family of operations
  1  backends/        cpu/ and cuda/ kernels and devices, what both share
  0  core/            Dim, Tensor, arenas, nodes, the kernel context

A file in folder X may include a file in folder Y only when Y's layer is X's or
lower.  Any file under a folder may include the public headers (they are the API
it implements); a public header includes only public headers.

Reads every `#include "dynet_lite/..."` in dynet_lite/ (.h .cc .cu .cuh), prints
each violation as `file:line: <folder> may not include <path> (layer order ...)`
and exits 1 if there is any.  `--extra-include FILE=PATH` adds a simulated
include line (to show that a wrong one is caught).
"""
import argparse
import os
import re
import sys

LAYERS = {"nn": 4, "train": 4, "io": 4, "export": 4, "exec": 3, "ops": 2, "backends": 1, "core": 0}
PUBLIC = 5
ORDER = "public -> nn/train/io/export -> exec -> ops -> backends -> core"
EXTENSIONS = (".h", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"(dynet_lite/[^"]+)"')

# Files allowed to break the order: none.  Keep it so.
ALLOWED = set()


def folder_of(rel):
    """The layer folder of a path relative to dynet_lite/ (None: a public header)."""
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else None


def layer_of(folder):
    return PUBLIC if folder is None else LAYERS.get(folder)


def violation(rel, target):
    """Why `rel` (relative to dynet_lite/) may not include `target` (a
    dynet_lite/... path), or None when it may."""
    src_folder = folder_of(rel)
    dst_folder = folder_of(target[len("dynet_lite/"):])
    if dst_folder is None:  # a public header
        return None if src_folder is not None or rel.endswith(".h") else "public files are headers"
    src, dst = layer_of(src_folder), layer_of(dst_folder)
    if src is None:
        return "unknown folder %s/ (add it to LAYERS)" % src_folder
    if dst is None:
        return "unknown folder %s/ (add it to LAYERS)" % dst_folder
    if dst <= src and src != PUBLIC:
        return None
    return "%s may not include %s (layer order %s)" % (src_folder + "/" if src_folder else "a public header", target, ORDER)


def includes(path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                    help="the repository root (default: this script's parent folder)")
    ap.add_argument("--extra-include", action="append", default=[], metavar="FILE=PATH",
                    help="also check a simulated line: FILE (relative to dynet_lite/) includes PATH")
    args = ap.parse_args()

    lib = os.path.join(os.path.abspath(args.root), "dynet_lite")
    if not os.path.isdir(lib):
        print("check_layers: no dynet_lite/ under %s" % args.root, file=sys.stderr)
        return 2
    lines = []  # (file relative to dynet_lite/, line number, included path)
    for dirpath, _, files in os.walk(lib):
        for name in sorted(files):
            if name.endswith(EXTENSIONS):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, lib).replace(os.sep, "/")
                lines += [(rel, n, target) for n, target in includes(path)]
    for extra in args.extra_include:
        rel, sep, target = extra.partition("=")
        if not sep or not target.startswith("dynet_lite/"):
            print("check_layers: --extra-include expects FILE=dynet_lite/PATH, got '%s'" % extra, file=sys.stderr)
            return 2
        lines.append((rel, 0, target))

    failures = 0
    for rel, number, target in sorted(lines):
        why = violation(rel, target)
        if why and rel not in ALLOWED:
            print("dynet_lite/%s:%d: %s" % (rel, number, why))
            failures += 1
    checked = len(lines)
    if failures:
        print("check_layers: %d of %d includes go against the layer order" % (failures, checked))
        return 1
    print("check_layers: %d includes follow the layer order %s" % (checked, ORDER))
    return 0


if __name__ == "__main__":
    sys.exit(main())

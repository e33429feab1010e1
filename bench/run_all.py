#!/usr/bin/env python3
"""Runs every benchmark task of ../shared/BENCHMARKS.md in every mode and prints a
table of medians.

  bench/run_all.py [--build build-bench] [--runs 3] [--tasks tagger,tagger-char,treelstm,rnnlm,overhead]
                   [--torch] [--dynet] [--gpu] [--data-dir DIR]

Builds the default Release tree first (what the README's commands build: the
CPU kernels of every instruction set, the widest this CPU runs chosen at
start-up) unless --no-build is given.  Runs are separate processes, interleaved mode by mode
(A B C A B C ...), as BENCHMARKS.md asks; the table shows the median of each
figure and the spread (min-max) of the throughput.

--torch adds the libtorch reference (bench/torch_*, built when CMake finds
libtorch) to the tasks that have one: its runs join each round of the task's
dynet_lite runs, and a second table gives the ratios dynet_lite / libtorch of the
medians, as BENCHMARKS.md asks of comparisons (same rounds, interleaved).

The autobatching tasks also run b64-auto-nocse: b64-auto with --dynet-cse 0
(without merging equal expressions, exec/cse.h), compared with DyNet's b64-auto.

The treelstm task also runs treelstm-prim in its rounds: bench/dynet_treelstm.cc
(a DyNet user's Tree-LSTM cell from primitive expressions) ported to dynet_lite
by its include prefix (bench/ported_dynet_treelstm), compared with the fused
builder of examples/treelstm (target: within 1.15x) and, with --dynet, with DyNet.

--dynet does the same with DyNet 2.1 itself (bench/dynet_*, built when
scripts/build_dynet.sh has installed DyNet), in every mode of every task, and
gives the ratios dynet_lite / DyNet next to the project's targets (b64-auto and
b1 at least 2x, rnnlm manual-64 at least 7200 / 5800 = 1.24x): the ratio of the
medians, and the median and range of the ratios taken round by round (each
against the faster DyNet builder of the same round).

--gpu runs the dynet_lite programs with --dynet-gpus 1 (parameters and graphs on
the first GPU; the build needs the CUDA backend: --no-build with a tree
configured where nvcc is found).
--data-dir points the programs at another copy of ../shared/data.

Each row gives the GFLOP/s the program reports (the multiply-adds of its
products, twice, over the timed seconds) against the machine's single-thread
peak (bench/fma_peak: independent FMAs in the widest vectors) and against the
GEMM rate of bench/gemm (Eigen's 512^3 product, compiled for this CPU).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TASKS = {
    "tagger": (["examples/tagger"], ["b1", "b64", "b64-auto", "b64-auto-nocse", "b64-depth"], "sent/s"),
    "tagger-char": (["examples/tagger", "--char"], ["b1", "b64", "b64-auto", "b64-auto-nocse", "b64-depth"], "sent/s"),
    "treelstm": (["examples/treelstm"], ["b1", "b64", "b64-auto", "b64-auto-nocse", "b64-depth"], "trees/s"),
    "rnnlm": (["examples/rnnlm"], ["manual-1", "manual-4", "manual-16", "manual-64", "b64-auto", "b64-auto-nocse"],
              "words/s"),
}
# dynet_lite's own modes: b64-auto without merging equal expressions (--dynet-cse 0;
# the autobatching modes merge them by default), compared with DyNet's b64-auto.
OWN_MODES = {"b64-auto-nocse": ["--bench", "b64-auto", "--dynet-cse", "0"]}
DYNET_PEER = {"b64-auto-nocse": "b64-auto"}

# Other dynet_lite programs run in a task's rounds: the DyNet Tree-LSTM program
# ported to dynet_lite, compared with the task's own program (the fused
# builder) mode by mode, and with DyNet.
SIBLINGS = {
    "treelstm": [("treelstm-prim", ["bench/ported_dynet_treelstm"], ["b1", "b64", "b64-auto", "b64-depth"])],
}
SIBLING_TARGET = {("treelstm-prim", "b64-auto"): 1.15}


# The libtorch programs of the tasks that have one, and their modes; each
# dynet_lite mode is compared with the libtorch mode of the same batch size.
TORCH_TASKS = {
    "tagger": (["bench/torch_tagger"], ["b1", "b64"]),
    "treelstm": (["bench/torch_treelstm"], ["b1", "b64"]),
}
TORCH_PEER = {"b1": "b1", "b64": "b64", "b64-auto": "b64", "b64-depth": "b64"}

# The DyNet programs (run in dynet_lite's modes of the task) and the targets for the
# ratio dynet_lite / DyNet: tagger, tagger-char and treelstm b64-auto twice DyNet's
# and b1 1.5 times; rnnlm manual-64 7,200 words/s where DyNet does 5,800.
# The LSTM tasks run DyNet with each of its two builders of the same LSTM:
# VanillaLSTMBuilder (separate operations per gate) and CompactVanillaLSTMBuilder
# (fused gates, which DyNet batches much better); the ratio is taken against the
# faster of the two in each mode.
DYNET_TASKS = {
    "tagger": ["bench/dynet_tagger"],
    "tagger-char": ["bench/dynet_tagger", "--char"],
    "treelstm": ["bench/dynet_treelstm"],
    "rnnlm": ["bench/dynet_rnnlm"],
}
DYNET_COMPACT = ("tagger", "tagger-char", "rnnlm")
DYNET_TARGET = {(t, m): r for t in ("tagger", "tagger-char", "treelstm", "treelstm-prim")
                for m, r in (("b1", 2.0), ("b64-auto", 2.0))}
DYNET_TARGET[("rnnlm", "manual-64")] = 7200 / 5800


def field(line, name):
    m = re.search(r"(?:^|[\s{])" + re.escape(name) + r"=([0-9.eE+-]+)", line)
    return float(m.group(1)) if m else None


def run(cmd, whole=False):
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), out.stdout, out.stderr))
    if whole:
        return out.stdout
    lines = [l for l in out.stdout.splitlines() if l.strip()]
    return lines[-1] if lines else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build-bench")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--tasks", default="tagger,tagger-char,treelstm,rnnlm,overhead")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--torch", action="store_true", help="also run the libtorch reference where a task has one")
    ap.add_argument("--dynet", action="store_true", help="also run DyNet 2.1 (bench/dynet_*) in every mode")
    ap.add_argument("--gpu", action="store_true", help="run the dynet_lite programs on the first GPU")
    ap.add_argument("--data-dir", default=None, help="folder with the corpora (default ../shared/data)")
    a = ap.parse_args()
    build = os.path.join(ROOT, a.build)
    if not a.no_build:
        # Quiet unless it fails: the AVX-512 kernels print g++'s warnings about its own headers.
        for cmd in (["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DDYNET_LITE_BUILD_TESTS=OFF"], ["cmake", "--build", build, "-j2"]):
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit("failed: %s\n%s%s" % (" ".join(cmd), out.stdout, out.stderr))
    tasks = a.tasks.split(",")
    if a.torch:
        for task in tasks:
            if task in TORCH_TASKS and not os.path.exists(os.path.join(build, TORCH_TASKS[task][0][0])):
                sys.exit("--torch: %s is not built in %s (CMake did not find libtorch; Debian: libtorch-dev)"
                         % (TORCH_TASKS[task][0][0], build))
    if a.dynet:
        for task in tasks:
            if task in DYNET_TASKS and not os.path.exists(os.path.join(build, DYNET_TASKS[task][0])):
                sys.exit("--dynet: %s is not built in %s (run scripts/build_dynet.sh, then configure again)"
                         % (DYNET_TASKS[task][0], build))
    gemm = []
    for _ in range(a.runs):
        m = re.search(r"median ([0-9.]+) GFLOP/s", run([os.path.join(build, "bench/gemm")]))
        if m:
            gemm.append(float(m.group(1)))
    print("single-thread GEMM 512^3: median %.1f GFLOP/s" % statistics.median(gemm) if gemm else "gemm: no figure")
    peak = None
    if os.path.exists(os.path.join(build, "bench/fma_peak")):
        m = re.search(r"median ([0-9.]+) GFLOP/s", run([os.path.join(build, "bench/fma_peak")]))
        peak = float(m.group(1)) if m else None
        print("single-thread peak (independent FMAs, bench/fma_peak): median %.1f GFLOP/s" % peak if peak
              else "fma_peak: no figure")
    print()
    print("| task | mode | throughput (median) | min-max | GFLOP/s | % of peak | % of GEMM 512^3 | kernels | "
          "bytes gathered |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ratios, dynet_ratios, sibling_ratios = [], [], []
    for task in tasks:
        if task == "overhead":
            continue
        prog, modes, unit = TASKS[task]
        extra = (["--dynet-gpus", "1"] if a.gpu else []) + (["--data-dir", a.data_dir] if a.data_dir else [])
        runs = [(task, mode, [os.path.join(build, prog[0])] + prog[1:] + OWN_MODES.get(mode, ["--bench", mode]) +
                 extra) for mode in modes]
        for sname, sprog, smodes in SIBLINGS.get(task, []):
            runs += [(sname, mode, [os.path.join(build, sprog[0])] + sprog[1:] + ["--bench", mode] +
                      (["--data-dir", a.data_dir] if a.data_dir else [])) for mode in smodes]
        if a.torch and task in TORCH_TASKS:
            tprog, tmodes = TORCH_TASKS[task]
            runs += [(task + "-libtorch", mode, [os.path.join(build, tprog[0])] + tprog[1:] + ["--bench", mode])
                     for mode in tmodes]
        if a.dynet and task in DYNET_TASKS:
            dprog = DYNET_TASKS[task]
            for suffix, extra_args in [("-dynet", [])] + ([("-dynet-compact", ["--compact"])]
                                                          if task in DYNET_COMPACT else []):
                runs += [(task + suffix, mode, [os.path.join(build, dprog[0])] + dprog[1:] + extra_args +
                          ["--bench", mode] + (["--data-dir", a.data_dir] if a.data_dir else []))
                         for mode in modes if mode not in OWN_MODES]
        results = {(name, mode): [] for name, mode, _ in runs}
        for _ in range(a.runs):  # one round: every mode of both libraries, then the next round
            for name, mode, cmd in runs:
                results[(name, mode)].append(run(cmd))
        medians, per_round = {}, {}
        for name, mode, _ in runs:
            lines = results[(name, mode)]
            tp = [field(l, unit) for l in lines]
            per_round[(name, mode)] = tp
            gf = [field(l, "GFLOP/s") for l in lines]
            kern = field(lines[0], "kernels")
            gath = field(lines[0], "bytes_gathered")
            medians[(name, mode)] = statistics.median(tp)
            rate = statistics.median([g for g in gf if g is not None]) if any(g is not None for g in gf) else None
            print("| %s | %s | %.0f %s | %.0f-%.0f | %s | %s | %s | %s | %s |" % (
                name, mode, statistics.median(tp), unit, min(tp), max(tp),
                "%.2f" % rate if rate is not None else "-",
                "%.0f%%" % (100 * rate / peak) if rate is not None and peak else "-",
                "%.0f%%" % (100 * rate / statistics.median(gemm)) if rate is not None and gemm else "-",
                "%d" % kern if kern is not None else "-", "%d" % gath if gath is not None else "-"))
        if a.torch and task in TORCH_TASKS:
            for mode in modes:
                peer = (task + "-libtorch", TORCH_PEER.get(mode))
                if peer in medians:
                    ratios.append((task, mode, peer[1], medians[(task, mode)], medians[peer], unit))
        for sname, _, smodes in SIBLINGS.get(task, []):
            for mode in smodes:
                sibling_ratios.append((sname, task, mode, medians[(sname, mode)], medians[(task, mode)], unit))
        if a.dynet and task in DYNET_TASKS:
            for name in [task] + [s[0] for s in SIBLINGS.get(task, [])]:
                for mode in modes:
                    peer = DYNET_PEER.get(mode, mode)
                    if (name, mode) in medians and (task + "-dynet", peer) in medians:
                        compact = medians.get((task + "-dynet-compact", peer))
                        # Per round: against the faster DyNet builder of the same round.
                        theirs = [per_round[(task + "-dynet", peer)]] + (
                            [per_round[(task + "-dynet-compact", peer)]] if compact else [])
                        round_ratios = [ours / max(t[r] for t in theirs)
                                        for r, ours in enumerate(per_round[(name, mode)])]
                        dynet_ratios.append((name, mode, medians[(name, mode)], medians[(task + "-dynet", peer)],
                                             compact, unit, round_ratios))
    if dynet_ratios:
        print()
        print("| task | mode | dynet_lite | DyNet 2.1 | DyNet, compact LSTM | dynet_lite / best DyNet | "
              "per round: median (range) | target |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for task, mode, ours, theirs, compact, unit, round_ratios in dynet_ratios:
            best = max(theirs, compact or 0)
            target = DYNET_TARGET.get((task, DYNET_PEER.get(mode, mode)))
            print("| %s | %s | %.0f %s | %.0f | %s | %.2fx | %.2fx (%.2f-%.2f) | %s |" % (
                task, mode, ours, unit, theirs, "%.0f" % compact if compact else "-", ours / best,
                statistics.median(round_ratios), min(round_ratios), max(round_ratios),
                "" if target is None else ">= %.2fx (%s)" % (target, "met" if ours / best >= target else "not met")))
    if sibling_ratios:
        print()
        print("| program | against | mode | program | against | against / program | target |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for sname, task, mode, ours, theirs, unit in sibling_ratios:
            target = SIBLING_TARGET.get((sname, mode))
            print("| %s | %s | %s | %.0f %s | %.0f %s | %.2fx | %s |" % (
                sname, task, mode, ours, unit, theirs, unit, theirs / ours,
                "" if target is None else "<= %.2fx (%s)" % (target, "met" if theirs / ours <= target else "not met")))
    if ratios:
        print()
        print("| task | dynet_lite mode | libtorch mode | dynet_lite | libtorch | dynet_lite / libtorch |")
        print("| --- | --- | --- | --- | --- | --- |")
        for task, mode, peer, ours, theirs, unit in ratios:
            print("| %s | %s | %s | %.0f %s | %.0f %s | %.1fx |" % (task, mode, peer, ours, unit, theirs, unit,
                                                                  ours / theirs))
    if "overhead" in tasks:
        print()
        print(run([os.path.join(build, "bench/overhead"), "--runs", str(a.runs)] + (["--dynet-gpus", "1"] if a.gpu else []),
                  whole=True))
        if a.dynet:
            overhead_against_dynet(build, a.runs)


def overhead_against_dynet(build, runs):
    """T5 as one DyNet program (bench/dynet_overhead.cc) built against DyNet and,
    ported by its include prefix, against dynet_lite: interleaved rounds, the
    ratio of the medians of total ns per node (build, forward, backward, update)
    against the target of at most 0.4x."""
    progs = [("dynet_lite", os.path.join(build, "bench/ported_dynet_overhead")),
             ("DyNet 2.1", os.path.join(build, "bench/dynet_overhead"))]
    if not all(os.path.exists(p) for _, p in progs):
        print("T5 against DyNet: bench/dynet_overhead not built (scripts/build_dynet.sh)")
        return
    phases = ["build", "forward", "backward", "update", "total"]
    got = {name: {ph: [] for ph in phases} for name, _ in progs}
    for _ in range(runs):
        for name, prog in progs:
            line = run([prog, "--dynet-seed", "1"])
            for ph in phases:
                got[name][ph].append(field(line, ph + "_ns_per_node"))
    print("T5 overhead, ns per node (medians of %d interleaved rounds; the same program against both libraries)" % runs)
    print()
    print("| phase | dynet_lite | DyNet 2.1 | dynet_lite / DyNet |")
    print("| --- | --- | --- | --- |")
    for ph in phases:
        ours, theirs = statistics.median(got["dynet_lite"][ph]), statistics.median(got["DyNet 2.1"][ph])
        target = " (target <= 0.4x: %s)" % ("met" if ours / theirs <= 0.4 else "not met") if ph == "total" else ""
        print("| %s | %.1f | %.1f | %.2fx%s |" % (ph, ours, theirs, ours / theirs, target))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs every benchmark task of ../shared/BENCHMARKS.md in every mode and prints a
table of medians.

  bench/run_all.py [--build build-bench] [--runs 3] [--tasks tagger,tagger-char,treelstm,rnnlm,overhead]

Builds the native Release tree first (cmake -DDYNET_LITE_NATIVE=ON) unless
--no-build is given.  Runs are separate processes, interleaved mode by mode
(A B C A B C ...), as BENCHMARKS.md asks; the table shows the median of each
figure and the spread (min-max) of the throughput.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TASKS = {
    "tagger": (["examples/tagger"], ["b1", "b64", "b64-auto", "b64-depth"], "sent/s"),
    "tagger-char": (["examples/tagger", "--char"], ["b1", "b64", "b64-auto", "b64-depth"], "sent/s"),
    "treelstm": (["examples/treelstm"], ["b1", "b64", "b64-auto", "b64-depth"], "trees/s"),
    "rnnlm": (["examples/rnnlm"], ["manual-1", "manual-4", "manual-16", "manual-64", "b64-auto"], "words/s"),
}


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
    a = ap.parse_args()
    build = os.path.join(ROOT, a.build)
    if not a.no_build:
        subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DDYNET_LITE_NATIVE=ON",
                        "-DDYNET_LITE_BUILD_TESTS=OFF"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["cmake", "--build", build, "-j2"], check=True, stdout=subprocess.DEVNULL)
    tasks = a.tasks.split(",")
    gemm = []
    for _ in range(a.runs):
        m = re.search(r"median ([0-9.]+) GFLOP/s", run([os.path.join(build, "bench/gemm")]))
        if m:
            gemm.append(float(m.group(1)))
    print("single-thread GEMM 512^3: median %.1f GFLOP/s" % statistics.median(gemm) if gemm else "gemm: no figure")
    print()
    print("| task | mode | throughput (median) | min-max | GFLOP/s | kernels | bytes gathered |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for task in tasks:
        if task == "overhead":
            continue
        prog, modes, unit = TASKS[task]
        results = {m: [] for m in modes}
        for _ in range(a.runs):
            for mode in modes:
                results[mode].append(run([os.path.join(build, prog[0])] + prog[1:] + ["--bench", mode]))
        for mode in modes:
            lines = results[mode]
            tp = [field(l, unit) for l in lines]
            gf = [field(l, "GFLOP/s") for l in lines]
            kern = field(lines[0], "kernels")
            gath = field(lines[0], "bytes_gathered")
            print("| %s | %s | %.0f %s | %.0f-%.0f | %s | %s | %s |" % (
                task, mode, statistics.median(tp), unit, min(tp), max(tp),
                "%.2f" % statistics.median([g for g in gf if g is not None]) if any(g is not None for g in gf) else "-",
                "%d" % kern if kern is not None else "-", "%d" % gath if gath is not None else "-"))
    if "overhead" in tasks:
        print()
        print(run([os.path.join(build, "bench/overhead"), "--runs", str(a.runs)], whole=True))


if __name__ == "__main__":
    main()

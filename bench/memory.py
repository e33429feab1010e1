#!/usr/bin/env python3
"""Peak resident memory of every benchmark task, dynet_lite against DyNet.

  bench/memory.py [--build build] [--tasks tagger,tagger-char,treelstm,rnnlm] [--modes b1,b64-auto,...]
                  [--data-dir DIR]

For each task and mode of bench/run_all.py, runs dynet_lite's program once and
reads its peak resident set size (the kernel's ru_maxrss of the finished
process).  DyNet reserves its memory up front (--dynet-mem, in MB, split in
four pools); the script looks for the smallest --dynet-mem with which DyNet's
program completes the task (bisection to within 5%), and reports DyNet's peak
resident set at that setting.  Without autobatching DyNet's pools grow by
themselves, so the smallest setting is the 4 MB floor and the resident set is
what the run really used; with autobatching the pools cannot grow and the
setting is a real bound.  The LSTM tasks run both of DyNet's builders
(VanillaLSTMBuilder and CompactVanillaLSTMBuilder) and keep the smaller.

The last column is dynet_lite's peak against DyNet's (the project's target: at
most 0.5).  Memory does not depend on the load of the machine, so one run each
is enough.  The build must have found DyNet (scripts/build_dynet.sh).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_all  # noqa: E402  (the task table)

ROOT = run_all.ROOT
DEFAULT_MODES = {
    "tagger": ["b1", "b64", "b64-auto"],
    "tagger-char": ["b1", "b64", "b64-auto"],
    "treelstm": ["b1", "b64", "b64-auto"],
    "rnnlm": ["manual-1", "manual-64", "b64-auto"],
}


def peak_rss_mb(cmd):
    """Runs cmd; returns (exit status, peak resident set in MB)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss / 1024.0


def smallest_dynet_mem(cmd):
    """The smallest --dynet-mem (MB) that runs cmd, and the peak RSS at it."""
    lo, hi = 4, 256
    status, rss = peak_rss_mb(cmd + ["--dynet-mem", str(lo)])
    if status == 0:
        return lo, rss
    while True:
        status, rss = peak_rss_mb(cmd + ["--dynet-mem", str(hi)])
        if status == 0:
            break
        lo, hi = hi, hi * 2
        if hi > 65536:
            sys.exit("DyNet did not run %s with --dynet-mem 65536" % " ".join(cmd))
    best_rss = rss
    while hi - lo > max(4, hi // 20):
        mid = (lo + hi) // 2
        status, rss = peak_rss_mb(cmd + ["--dynet-mem", str(mid)])
        if status == 0:
            hi, best_rss = mid, rss
        else:
            lo = mid
    return hi, best_rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--tasks", default="tagger,tagger-char,treelstm,rnnlm")
    ap.add_argument("--modes", default=None, help="comma-separated modes (default: the table in this script)")
    ap.add_argument("--data-dir", default=None)
    a = ap.parse_args()
    build = os.path.join(ROOT, a.build)
    data = ["--data-dir", a.data_dir] if a.data_dir else []
    print("| task | mode | dynet_lite peak RSS | DyNet smallest --dynet-mem | DyNet peak RSS at it | "
          "dynet_lite / DyNet | target |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for task in a.tasks.split(","):
        prog, _, _ = run_all.TASKS[task]
        dprog = run_all.DYNET_TASKS[task]
        if not os.path.exists(os.path.join(build, dprog[0])):
            sys.exit("%s is not built in %s (scripts/build_dynet.sh, then configure again)" % (dprog[0], build))
        modes = a.modes.split(",") if a.modes else DEFAULT_MODES[task]
        for mode in modes:
            status, ours = peak_rss_mb([os.path.join(build, prog[0])] + prog[1:] + ["--bench", mode] + data)
            if status != 0:
                sys.exit("dynet_lite failed: %s %s" % (task, mode))
            best = None
            variants = [[]] + ([["--compact"]] if task in run_all.DYNET_COMPACT else [])
            for extra in variants:
                cmd = [os.path.join(build, dprog[0])] + dprog[1:] + extra + ["--bench", mode] + data
                mem, rss = smallest_dynet_mem(cmd)
                if best is None or rss < best[1]:
                    best = (mem, rss, "compact" if extra else "")
            ratio = ours / best[1]
            print("| %s | %s | %.0f MB | %d MB%s | %.0f MB | %.2f | <= 0.5 (%s) |" % (
                task, mode, ours, best[0], " (compact)" if best[2] else "", best[1], ratio,
                "met" if ratio <= 0.5 else "not met"), flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Compares builds of dynet_lite (or one build under several instruction sets)
on the benchmark tasks, in interleaved rounds, and prints the medians and their
ratios to the first build.

  bench/compare_builds.py --builds NAME=DIR[:ISA],... [--runs 5] [--tasks "tagger b1,treelstm b64-auto"]

DIR is a build tree (its examples/ are run); ISA, when given, is passed as
DYNET_LITE_ISA (sse2, avx2 or avx512) to pick that set of CPU kernels.  Each
round runs every task in every build once (A B C A B C ...), each run a
separate process; the first losses of each are printed, so that builds that
compute the same thing can be seen to.  For example, the default build against
a native one and against itself on the baseline kernels:

  bench/compare_builds.py --builds default=build,sse2=build:sse2,native=build-native
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

TASKS = {
    "tagger b1": ["examples/tagger", "--bench", "b1"],
    "tagger b64": ["examples/tagger", "--bench", "b64"],
    "tagger b64-auto": ["examples/tagger", "--bench", "b64-auto"],
    "tagger b64-depth": ["examples/tagger", "--bench", "b64-depth"],
    "tagger-char b1": ["examples/tagger", "--char", "--bench", "b1"],
    "tagger-char b64-auto": ["examples/tagger", "--char", "--bench", "b64-auto"],
    "treelstm b1": ["examples/treelstm", "--bench", "b1"],
    "treelstm b64": ["examples/treelstm", "--bench", "b64"],
    "treelstm b64-auto": ["examples/treelstm", "--bench", "b64-auto"],
    "treelstm b64-depth": ["examples/treelstm", "--bench", "b64-depth"],
    "rnnlm manual-64": ["examples/rnnlm", "--bench", "manual-64"],
    "rnnlm b64-auto": ["examples/rnnlm", "--bench", "b64-auto"],
}
DEFAULT_TASKS = "tagger b1,tagger b64-auto,tagger-char b64-auto,treelstm b1,treelstm b64-auto,rnnlm manual-64"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--builds", required=True, help="NAME=DIR[:ISA],... (the first is the reference)")
    ap.add_argument("--runs", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--tasks", default=DEFAULT_TASKS, help="comma-separated, from: " + ", ".join(TASKS))
    a = ap.parse_args()
    builds = []
    for spec in a.builds.split(","):
        name, _, rest = spec.partition("=")
        path, _, isa = rest.partition(":")
        if not name or not path:
            sys.exit("--builds: expected NAME=DIR[:ISA], got '%s'" % spec)
        builds.append((name, path, isa))
    tasks = a.tasks.split(",")
    for t in tasks:
        if t not in TASKS:
            sys.exit("--tasks: unknown task '%s' (known: %s)" % (t, ", ".join(TASKS)))
    rates, losses = {}, {}
    for _ in range(a.runs):
        for t in tasks:
            for name, path, isa in builds:
                env = dict(os.environ)
                if isa:
                    env["DYNET_LITE_ISA"] = isa
                out = subprocess.run([os.path.join(path, TASKS[t][0])] + TASKS[t][1:], capture_output=True,
                                     text=True, env=env)
                rate = re.search(r"(?:sent|trees|words)/s=([0-9.]+)", out.stdout)
                if out.returncode != 0 or not rate:
                    sys.exit("%s in %s failed:\n%s%s" % (t, name, out.stdout[-2000:], out.stderr[-2000:]))
                rates.setdefault((t, name), []).append(float(rate.group(1)))
                first = re.search(r"loss_first_steps=(\S+)", out.stdout)
                losses[(t, name)] = first.group(1) if first else "?"
    names = [b[0] for b in builds]
    print("| task | " + " | ".join(names) + " | " + " | ".join("%s / %s" % (n, names[0]) for n in names[1:]) + " |")
    print("| --- " * (2 * len(names)) + "|")
    for t in tasks:
        med = [statistics.median(rates[(t, n)]) for n in names]
        print("| %s | %s | %s |" % (t, " | ".join("%.0f" % m for m in med),
                                   " | ".join("%.3f" % (m / med[0]) for m in med[1:])))
    print("\nfirst losses:")
    for t in tasks:
        print("  %s: %s" % (t, "; ".join("%s %s" % (n, losses[(t, n)]) for n in names)))


if __name__ == "__main__":
    main()

"""Compiled programs against rebuilt graphs (dynet_lite/compile.h): each task's
`--bench MODE` with and without `--compile`, in interleaved rounds (A B, then
B A, ...), with the ratio of the medians of the same rounds and the median
and range of the ratios taken round by round, which a noisy machine moves
less (issue targets: tagger b1 >= 1.3x on the CPU and >= 5x on a GPU,
b64-auto >= 2x on a GPU, rnnlm manual-64 >= 1.1x).  --structure adds the
tagger's `--compile-structure` to its rounds (graphs built as usual, run
through the programs of their structures: ProgramCache::forward(e)).

  bench/compiled.py [--build build] [--runs 3] [--gpu] [--structure] [--data-dir DIR] [--pairs tagger:b1,...]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = [("tagger", "b1", "sent/s"), ("tagger", "b64-auto", "sent/s"),
         ("rnnlm", "manual-16", "words/s"), ("rnnlm", "manual-64", "words/s")]
# The throughput each program prints.
UNITS = {"tagger": "sent/s", "rnnlm": "words/s", "treelstm": "trees/s", "parser": "sent/s"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--gpu", action="store_true", help="run with --dynet-gpus 1")
    ap.add_argument("--structure", action="store_true", help="also the tagger's --compile-structure")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--pairs", default=None, help="task:mode,... (default: %s)" %
                    ",".join("%s:%s" % (t, m) for t, m, _ in PAIRS))
    a = ap.parse_args()
    pairs = PAIRS
    if a.pairs:
        pairs = [(p.split(":")[0], p.split(":")[1], UNITS.get(p.split(":")[0], "sent/s")) for p in a.pairs.split(",")]
    extra = (["--dynet-gpus", "1"] if a.gpu else []) + (["--data-dir", a.data_dir] if a.data_dir else [])
    got = {}
    for r in range(a.runs):
        for task, mode, unit in pairs:
            kinds = ["", "--compile"] + (["--compile-structure"] if a.structure and task == "tagger" else [])
            for compiled in (kinds if r % 2 == 0 else kinds[::-1]):
                cmd = [os.path.join(a.build, "examples", task), "--bench", mode] + ([compiled] if compiled else []) + extra
                out = subprocess.run(cmd, capture_output=True, text=True)
                lines = [l for l in out.stdout.splitlines() if l.strip()]
                line = lines[-1] if lines else ""
                m = re.search(r"(?:^|\s)" + re.escape(unit) + r"=([0-9.eE+-]+)", line)
                if out.returncode != 0 or not m:
                    sys.exit("failed: %s\n%s%s" % (" ".join(cmd), out.stdout[-2000:], out.stderr[-2000:]))
                got.setdefault((task, mode, compiled), []).append(float(m.group(1)))
                print("round %d %s %s %s: %s" % (r + 1, task, mode, compiled, line[:200]), flush=True)
    table(pairs, got, "--compile", "compiled")
    if a.structure and any(t == "tagger" for t, _, _ in pairs):
        table([p for p in pairs if p[0] == "tagger"], got, "--compile-structure", "by structure (--compile-structure)")


def table(pairs, got, flag, name):
    """The rebuilt and `flag` runs of each pair: medians, ranges and ratios."""
    print()
    print("| task | mode | rebuilt | %s | %s / rebuilt | per round: median (range) |" % (name, name.split(" (")[0]))
    print("| --- | --- | --- | --- | --- | --- |")
    for task, mode, unit in pairs:
        reb, comp = got[(task, mode, "")], got[(task, mode, flag)]
        per_round = [c / b for c, b in zip(comp, reb)]
        print("| %s | %s | %.1f %s (%.1f-%.1f) | %.1f (%.1f-%.1f) | %.2fx | %.2fx (%.2f-%.2f) |" % (
            task, mode, statistics.median(reb), unit, min(reb), max(reb), statistics.median(comp), min(comp),
            max(comp), statistics.median(comp) / statistics.median(reb), statistics.median(per_round),
            min(per_round), max(per_round)))


if __name__ == "__main__":
    main()

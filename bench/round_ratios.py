"""dynet_lite against DyNet round by round, for a noisy machine.

Each PROGRAM is `name|command line`; names starting with `dynet` are DyNet's
programs, the others dynet_lite's.  Every round runs each program once (the
order reversed every other round) and reads the throughput `KEY=value` from its
output.  For each dynet_lite program the ratio to the faster DyNet program of
the same round is taken, and the median and range of those ratios are printed,
with each program's median throughput.  A ratio taken within one round sees the
same state of the machine on both sides, which a ratio of two medians does not.

  bench/round_ratios.py ROUNDS KEY PROGRAM [PROGRAM ...]

For example (bench/RESULTS.md lists the runs it gives):
  bench/round_ratios.py 10 sent/s 'ours|build/examples/tagger --bench b64-auto' \\
      'dynet|build/bench/dynet_tagger --bench b64-auto' \\
      'dynet-compact|build/bench/dynet_tagger --compact --bench b64-auto'
"""
import re
import statistics
import subprocess
import sys


def throughput(command, key):
    out = subprocess.run(command, shell=True, capture_output=True, text=True)
    m = re.search(re.escape(key) + r"=([0-9.]+)", out.stdout)
    if out.returncode != 0 or not m:
        sys.exit(f"round_ratios: '{command}' exited with {out.returncode} and printed no {key}=:\n{out.stderr}")
    return float(m.group(1))


def main(argv):
    if len(argv) < 4 or not argv[0].isdigit() or int(argv[0]) < 1:
        sys.exit(__doc__)
    rounds, key = int(argv[0]), argv[1]
    programs = []
    for spec in argv[2:]:
        name, sep, command = spec.partition("|")
        if not sep or not name or not command:
            sys.exit(f"round_ratios: '{spec}' is not NAME|COMMAND")
        programs.append((name, command))
    theirs = [n for n, _ in programs if n.startswith("dynet")]
    ours = [n for n, _ in programs if not n.startswith("dynet")]
    if not theirs or not ours:
        sys.exit("round_ratios: give at least one DyNet program (name dynet...) and one other")
    results = {n: [] for n, _ in programs}
    for r in range(rounds):
        for name, command in programs if r % 2 == 0 else reversed(programs):
            results[name].append(throughput(command, key))
    best = [max(results[n][r] for n in theirs) for r in range(rounds)]
    for name, _ in programs:
        v = results[name]
        print(f"{name:16} median {statistics.median(v):9.1f} {key}  min-max {min(v):.0f}-{max(v):.0f}")
    for name in ours:
        ratios = [a / b for a, b in zip(results[name], best)]
        print(f"{name:16} / best DyNet of the round: median {statistics.median(ratios):.2f}x "
              f"(range {min(ratios):.2f}-{max(ratios):.2f}, {rounds} rounds)")


if __name__ == "__main__":
    main(sys.argv[1:])

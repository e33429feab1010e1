#!/usr/bin/env python3
"""Runs exported ONNX models in ONNX Runtime and compares with dynet_lite.

    onnx_check.py DIR                       every DIR/NAME.onnx with DIR/NAME.json
    onnx_check.py MODEL.onnx RUNS.json      one model (an example's --export and
                                            --export-reference)

For each model: runs ONNX's checker (full check, with shape inference), then,
for each run in the JSON file, feeds the inputs to ONNX Runtime (one thread) and
compares every output with dynet_lite's: by default to 1e-5 relative
(|a - b| <= 1e-5 * max(1, |b|)); an output may say "compare": "argmax" (equal
argmax along the last axis, e.g. predicted tags) or give its own tolerance, and
"pick_sum": [k_0, k_1, ...] compares the sum over t of output[t, 0, k_t] (a
sentence's log-likelihood from per-position log-probabilities) instead.
Prints per model the runs, the largest relative difference, the argmax
agreement and ONNX Runtime's runs per second; exits 1 naming each run and output
that differs.
"""
import glob
import json
import os
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort

DEFAULT_RTOL = 1e-5


def session(path):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def array(t):
    return np.asarray(t["data"], dtype=t["dtype"]).reshape(t["shape"])


def check_model(path, runs_path):
    """Returns (failures, summary line)."""
    onnx.checker.check_model(onnx.load(path), full_check=True)
    with open(runs_path) as f:
        runs = json.load(f)
    sess = session(path)
    feeds = [{name: array(t) for name, t in run["inputs"].items()} for run in runs]
    names = [list(run["outputs"]) for run in runs]
    start = time.perf_counter()
    results = [sess.run(n, fd) for n, fd in zip(names, feeds)]
    seconds = time.perf_counter() - start
    failures, worst, agree, total = [], 0.0, 0, 0
    for k, (run, got) in enumerate(zip(runs, results)):
        for name, value in zip(names[k], got):
            spec = run["outputs"][name]
            want = array(spec)
            if "pick_sum" in spec:  # one number: sum over t of value[t, 0, pick[t]]
                picks = np.asarray(spec["pick_sum"])
                value = np.asarray(value[np.arange(len(picks)), 0, picks].astype(np.float64).sum(), dtype=np.float32)
                want = want.reshape(())
            if value.shape != want.shape:
                failures.append("%s run %d output %s: shape %s, dynet_lite %s" % (path, k, name, value.shape, want.shape))
                continue
            err = np.abs(value - want) / np.maximum(1.0, np.abs(want))
            worst = max(worst, float(err.max()) if err.size else 0.0)
            compare = spec.get("compare", str(DEFAULT_RTOL))
            if compare == "argmax":
                same = np.argmax(value, axis=-1) == np.argmax(want, axis=-1)
                agree += int(same.sum())
                total += same.size
                if not same.all():
                    failures.append("%s run %d output %s: argmax differs at %d of %d places"
                                    % (path, k, name, int((~same).sum()), same.size))
            elif not np.all(err <= float(compare)):
                i = np.unravel_index(np.argmax(err), err.shape)
                failures.append("%s run %d output %s: relative difference %.3g at %s (%r vs %r), tolerance %s"
                                % (path, k, name, err[i], i, value[i], want[i], compare))
    line = "%s: %d runs, largest relative difference %.3g" % (os.path.basename(path), len(runs), worst)
    if total:
        line += ", argmax equal at %d of %d" % (agree, total)
    line += ", ONNX Runtime %.1f runs/s (one thread)" % (len(runs) / seconds if seconds > 0 else 0)
    return failures, line


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0].endswith(".onnx"):
        pairs = [(args[0], args[1])]
    elif len(args) == 1:
        pairs = [(p, p[: -len(".onnx")] + ".json") for p in sorted(glob.glob(os.path.join(args[0], "*.onnx")))]
        if not pairs:
            print("onnx_check: no .onnx files in %s" % args[0], file=sys.stderr)
            return 1
    else:
        print("usage: onnx_check.py DIR | onnx_check.py MODEL.onnx RUNS.json", file=sys.stderr)
        return 2
    failures = []
    for model, runs in pairs:
        f, line = check_model(model, runs)
        failures += f
        print(line)
    for f in failures[:50]:
        print(f, file=sys.stderr)
    print("onnx_check: %d models, %d failures" % (len(pairs), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Runs the exported ONNX cases in ONNX Runtime and compares with dynet_lite.

    onnx_check.py DIR

For every DIR/NAME.onnx (written by onnx_cases or an example's --export): runs
ONNX's checker (full check, with shape inference), then, for each run in
DIR/NAME.json, feeds the inputs to ONNX Runtime (one thread) and requires every
output to equal dynet_lite's to 1e-5 relative (|a - b| <= 1e-5 * max(1, |b|)).
Exits 1 naming each case, run and output that differs.
"""
import glob
import json
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort

RTOL = 1e-5


def session(path):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def array(t):
    return np.asarray(t["data"], dtype=t["dtype"]).reshape(t["shape"])


def check_case(path):
    """Returns the list of failures of one case."""
    onnx.checker.check_model(onnx.load(path), full_check=True)
    runs_path = path[: -len(".onnx")] + ".json"
    with open(runs_path) as f:
        runs = json.load(f)
    sess = session(path)
    failures = []
    for k, run in enumerate(runs):
        feeds = {name: array(t) for name, t in run["inputs"].items()}
        names = list(run["outputs"])
        got = sess.run(names, feeds)
        for name, value in zip(names, got):
            want = array(run["outputs"][name])
            if value.shape != want.shape:
                failures.append("%s run %d output %s: shape %s, dynet_lite %s" % (path, k, name, value.shape, want.shape))
                continue
            err = np.abs(value - want) / np.maximum(1.0, np.abs(want))
            if not np.all(err <= RTOL):
                i = np.unravel_index(np.argmax(err), err.shape)
                failures.append("%s run %d output %s: relative error %.3g at %s (%r vs %r)"
                                % (path, k, name, err[i], i, value[i], want[i]))
    return failures, len(runs)


def main():
    if len(sys.argv) != 2:
        print("usage: onnx_check.py DIR", file=sys.stderr)
        return 2
    paths = sorted(glob.glob(os.path.join(sys.argv[1], "*.onnx")))
    if not paths:
        print("onnx_check: no .onnx files in %s" % sys.argv[1], file=sys.stderr)
        return 1
    failures, runs = [], 0
    for p in paths:
        f, n = check_case(p)
        failures += f
        runs += n
    for f in failures:
        print(f, file=sys.stderr)
    print("onnx_check: %d models, %d runs, %d failures" % (len(paths), runs, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

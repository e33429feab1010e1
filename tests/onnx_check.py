#!/usr/bin/env python3
"""Runs exported ONNX models in ONNX Runtime and compares with dynet_lite.

    onnx_check.py DIR                       every DIR/NAME.onnx with DIR/NAME.json
    onnx_check.py MODEL.onnx RUNS.json      one model (an example's --export and
                                            --export-reference)
    onnx_check.py --parser ENC.onnx SCORER.onnx RUNS.json   the parser's two models
    onnx_check.py --char-tagger TAGGER.onnx RUNS.json       tagger --char's three models

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


def check_parser(encoder, scorer, runs_path):
    """The parser's two models against dynet_lite's greedy parses: per sentence
    the encoder runs once, then per transition the scorer on the features of the
    four slots dynet_lite's parse had (position n: the empty slot)."""
    for p in (encoder, scorer):
        onnx.checker.check_model(onnx.load(p), full_check=True)
    with open(runs_path) as f:
        runs = json.load(f)
    enc, sco = session(encoder), session(scorer)
    failures, worst, transitions = [], 0.0, 0
    start = time.perf_counter()
    for k, run in enumerate(runs):
        n = len(run["words"])
        words = np.asarray(run["words"], dtype=np.int64).reshape(n, 1)
        tags = np.asarray(run["tags"], dtype=np.int64).reshape(n, 1)
        feats, empty = enc.run(["features", "empty_features"], {"words": words, "tags": tags})
        table = np.concatenate([feats[:, 0], empty], axis=0)  # [n + 1, 4, MLP]
        slots = np.asarray(run["slots"], dtype=np.int64).reshape(-1, 4)
        x = np.stack([table[slots[:, j], j] for j in range(4)], axis=1)  # [T, 4, MLP]
        (got,) = sco.run(["scores"], {"slots": x.astype(np.float32)})
        want = np.asarray(run["scores"], dtype=np.float32).reshape(got.shape)
        err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
        transitions += len(slots)
        worst = max(worst, float(err.max()) if err.size else 0.0)
        if err.size and err.max() > DEFAULT_RTOL:
            failures.append("%s sentence %d: relative difference %.3g in the transition scores" % (runs_path, k, err.max()))
    seconds = time.perf_counter() - start
    print("%s + %s: %d sentences, %d transitions, largest relative difference %.3g, ONNX Runtime %.1f sentences/s"
          % (os.path.basename(encoder), os.path.basename(scorer), len(runs), transitions, worst, len(runs) / seconds))
    return failures


def check_char_tagger(tagger, runs_path):
    """tagger --char: three models (tagger over token vectors, word rows, a word's
    characters); per sentence the tokens dynet_lite spelled out take their vector
    from the characters' model, the others from the words' model."""
    stem = tagger[: -len(".onnx")]
    paths = (tagger, stem + "-words.onnx", stem + "-chars.onnx")
    for p in paths:
        onnx.checker.check_model(onnx.load(p), full_check=True)
    with open(runs_path) as f:
        runs = json.load(f)
    tag, words_model, chars_model = (session(p) for p in paths)
    failures, worst, agree, total, spelled_total = [], 0.0, 0, 0, 0
    start = time.perf_counter()
    for k, run in enumerate(runs):
        words = array(run["inputs"]["words"])
        spelled = array(run["inputs"]["spelled"])
        flat = list(run["inputs"]["chars"]["data"])
        (reprs,) = words_model.run(["reprs"], {"words": words})
        pos = 0
        for i in range(len(spelled)):
            length = flat[pos]
            chars = np.asarray(flat[pos + 1 : pos + 1 + length], dtype=np.int64).reshape(length, 1)
            pos += 1 + length
            if spelled[i]:
                (r,) = chars_model.run(["repr"], {"chars": chars})
                reprs[i, 0] = r[0]
                spelled_total += 1
        (got,) = tag.run(["scores"], {"reprs": reprs})
        want = array(run["outputs"]["scores"])
        err = np.abs(got - want) / np.maximum(1.0, np.abs(want))
        worst = max(worst, float(err.max()))
        same = np.argmax(got, axis=-1) == np.argmax(want, axis=-1)
        agree += int(same.sum())
        total += same.size
        if not same.all():
            failures.append("%s run %d: argmax differs at %d of %d tokens" % (runs_path, k, int((~same).sum()), same.size))
    seconds = time.perf_counter() - start
    print("%s (+ -words, -chars): %d sentences, %d tokens spelled out, largest relative difference %.3g, argmax "
          "equal at %d of %d, ONNX Runtime %.1f sentences/s" % (os.path.basename(tagger), len(runs), spelled_total,
                                                                 worst, agree, total, len(runs) / seconds))
    return failures


def main():
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "--char-tagger":
        failures = check_char_tagger(*args[1:])
        for f in failures[:50]:
            print(f, file=sys.stderr)
        print("onnx_check: char tagger, %d failures" % len(failures))
        return 1 if failures else 0
    if len(args) == 4 and args[0] == "--parser":
        failures = check_parser(*args[1:])
        for f in failures[:50]:
            print(f, file=sys.stderr)
        print("onnx_check: parser, %d failures" % len(failures))
        return 1 if failures else 0
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

#!/usr/bin/env bash
# The ONNX export on real data: trains the examples (or reuses the models in
# OUT), exports each with --export and --export-reference over its whole test
# set, and runs the exported files in ONNX Runtime (tests/onnx_check.py):
#   tagger    tags equal to dynet_lite's on the UD English EWT test set (also --char)
#   rnnlm     per-sentence log-likelihoods within 1e-4 relative on the PTB test set
#   treelstm  root labels equal on the SST test set
#   parser    transition scores within 1e-5 along dynet_lite's greedy parses
# then times the tagger, one thread each (dynet_lite's CPU backend runs on one): ONNX Runtime on the exported model
# against dynet_lite's own --predict, sentence by sentence over the test set.
#
#   scripts/onnx_real_data.sh [OUT]    (default build/onnx-real; BUILD=build, EPOCHS=1)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
out=${1:-$build/onnx-real}
epochs=${EPOCHS:-1}
bin=$build/examples
python=$build/venv/bin/python
check=$root/tests/onnx_check.py
mkdir -p "$out"
bash "$root/scripts/venv.sh" "$build/venv"

train() {  # train EXAMPLE [ARGS...]: the model OUT/EXAMPLE.model, once
  local ex=$1
  shift
  if [ ! -f "$out/$ex.model" ]; then
    echo "== training $ex ($epochs epoch(s))"
    "$bin/$ex" --epochs "$epochs" --model "$out/$ex.model" "$@" | tail -n 1
  fi
}

export_model() {  # export_model EXAMPLE: OUT/EXAMPLE.onnx and OUT/EXAMPLE.json
  "$bin/$1" --load "$out/$1.model" --export "$out/$1.onnx" --export-reference "$out/$1.json"
}

train tagger
train treelstm
if [ ! -f "$out/tagger-char.model" ]; then
  echo "== training tagger --char ($epochs epoch(s))"
  "$bin/tagger" --char --epochs "$epochs" --model "$out/tagger-char.model" | tail -n 1
fi
train rnnlm
train parser
for ex in tagger treelstm rnnlm parser; do
  echo "== $ex"
  export_model "$ex"
  if [ "$ex" = parser ]; then
    "$python" "$check" --parser "$out/parser.onnx" "$out/parser-scorer.onnx" "$out/parser.json"
  else
    "$python" "$check" "$out/$ex.onnx" "$out/$ex.json"
  fi
done

echo "== tagger --char"
"$bin/tagger" --load "$out/tagger-char.model" --export "$out/tagger-char.onnx" \
  --export-reference "$out/tagger-char.json"
"$python" "$check" --char-tagger "$out/tagger-char.onnx" "$out/tagger-char.json"

echo "== tagger speed, one thread, sentence by sentence over the test set"
test_conllu=$root/../shared/data/ud-english-ewt/en_ewt-ud-test.conllu
awk -F'\t' '/^[0-9]+\t/ && $1 !~ /[-.]/ {line = line (line ? " " : "") $2} /^$/ {if (line) print line; line = ""}' \
  "$test_conllu" > "$out/tagger-test.txt"
sentences=$(wc -l < "$out/tagger-test.txt")
for round in 1 2 3; do
  start=$(date +%s.%N)
  "$bin/tagger" --load "$out/tagger.model" --predict "$out/tagger-test.txt" > /dev/null
  end=$(date +%s.%N)
  echo "dynet_lite --predict round $round: $(echo "$sentences / ($end - $start)" | bc -l | xargs printf '%.1f') sentences/s (model loading included)"
  "$python" "$check" "$out/tagger.onnx" "$out/tagger.json" > "$out/tagger-ort.txt"
  sed -n "1s/^/ONNX Runtime round $round: /p" "$out/tagger-ort.txt"
done

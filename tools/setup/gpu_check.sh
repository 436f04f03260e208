#!/usr/bin/env bash
# The judge on an NVIDIA GPU, checked end to end on a machine that has one (never part of the test suite).
#
#   tools/setup/gpu_check.sh [--results DIR] [--model FILE.gguf] [--steps N] [--episodes N] [--ray-actors N]
#                      [--venv DIR] [--dry-run]
#
# 1. builds llama-cpp-python with CUDA (CMAKE_ARGS=-DGGML_CUDA=on) into its own wheel cache folder and its own
#    venv (tools/setup/bootstrap.sh keys the wheel cache by CMAKE_ARGS, so the CPU build is never overwritten) and
#    checks that the build can offload;
# 2. runs the judge benchmark (tools.bench.bench_judge) with the embedded judge on the CPU and on the GPU;
# 3. with --model: the same benchmark with that GGUF on the GPU, then collects a small TWC file and labels it
#    with COREN using that judge on the GPU (and, with --ray-actors N, again on N Ray judge actors sharing
#    the GPU, checking that the labels are identical).
# Everything goes under the results folder (default tools/results/gpu-check-UTCTIME): one log per step, the
# benchmark JSON files, the labeling reports, and summary.json / summary.md with each step's status and time.
# --dry-run checks the arguments and prints the steps without running anything. Exit status: 0 all steps
# passed, 1 a step failed (see its log), 2 bad arguments or no usable GPU/CUDA toolkit.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
RESULTS=""
MODEL=""
STEPS=10
EPISODES=4
RAY_ACTORS=0
VENV="${EDGEJUDGE_GPU_VENV:-$ROOT/.venv-gpu}"
DRY_RUN=0

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
die() { printf 'gpu_check: %s\n' "$*" >&2; exit 2; }
need_int() {
  if ! [[ "$2" =~ ^[0-9]+$ ]] || [ "$2" -lt "$3" ]; then die "$1 needs an integer >= $3, got '$2'"; fi
}

# an option's value: present and not another option
val() { if [ $# -lt 4 ] || [[ "$4" == --* ]]; then die "$1 needs $2"; fi; }
while [ $# -gt 0 ]; do
  case "$1" in
    --results) val "$1" "a folder" "$@"; RESULTS="$2"; shift 2 ;;
    --model) val "$1" "a .gguf file" "$@"; MODEL="$2"; shift 2 ;;
    --steps) val "$1" "a number" "$@"; need_int --steps "$2" 1; STEPS="$2"; shift 2 ;;
    --episodes) val "$1" "a number" "$@"; need_int --episodes "$2" 1; EPISODES="$2"; shift 2 ;;
    --ray-actors) val "$1" "a number" "$@"; need_int --ray-actors "$2" 0; RAY_ACTORS="$2"; shift 2 ;;
    --venv) val "$1" "a folder" "$@"; VENV="$2"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

if [ -n "$MODEL" ]; then
  [ -f "$MODEL" ] || die "--model $MODEL: no such file"
  case "$MODEL" in *.gguf) ;; *) die "--model $MODEL: expected a .gguf file" ;; esac
  [ "$(head -c 4 "$MODEL")" = "GGUF" ] || die "--model $MODEL: not a GGUF file (no GGUF magic)"
  MODEL="$(cd "$(dirname "$MODEL")" && pwd)/$(basename "$MODEL")"
fi
[ -n "$RESULTS" ] || RESULTS="$ROOT/tools/results/gpu-check-$(date -u +%Y%m%dT%H%M%SZ)"
RESULTS="$(realpath -m "$RESULTS")"
VENV="$(realpath -m "$VENV")"

export CMAKE_ARGS="-DGGML_CUDA=on"
export EDGEJUDGE_VENV="$VENV"
export EDGEJUDGE_THREADS="${EDGEJUDGE_THREADS:-1}"
export HF_HUB_OFFLINE=1
q() { printf '%q' "$1"; }  # a path as one shell word in the step commands below
PY="$(q "$VENV/bin/python")"
R="$(q "$RESULTS")"
T="$(q "$ROOT/tools/setup")"
M="$(q "$MODEL")"
EJ="$PY -m models.cli"
DATA="$R/twc-small.jsonl"
EXTRAS="label,env"
[ "$RAY_ACTORS" -eq 0 ] || EXTRAS="$EXTRAS,cluster"

# name|command (run from the repository root; each in its own log)
STEPS_LIST=(
  "build|$T/bootstrap.sh $EXTRAS"
  "offload|$PY -c 'import llama_cpp, sys; ok = llama_cpp.llama_supports_gpu_offload(); print(\"gpu offload:\", ok); sys.exit(0 if ok else 1)'"
  "bench_cpu|$PY -m tools.bench.bench_judge --steps $STEPS --gpu-layers 0 --no-progress --out $R/bench_judge_cpu.json"
  "bench_gpu|$PY -m tools.bench.bench_judge --steps $STEPS --gpu-layers -1 --no-progress --out $R/bench_judge_gpu.json"
)
if [ -n "$MODEL" ]; then
  LABEL="$EJ label coren $DATA --judge $M --gpu-layers -1 --prompts 4 --qa-size 8 --no-progress"
  STEPS_LIST+=(
    "bench_model_gpu|$PY -m tools.bench.bench_judge --model $M --steps $STEPS --gpu-layers -1 --no-progress --out $R/bench_judge_model_gpu.json"
    "collect|$EJ collect --env twx:twc --split dev --episodes $EPISODES --behaviour gold-noise --noise 0.3 --max-steps 10 --seed 0 --out $DATA"
    "label_gpu|$LABEL --cache $R/label.sqlite --out $R/twc-small.coren.jsonl --report $R/label_coren_gpu.json"
  )
  if [ "$RAY_ACTORS" -gt 0 ]; then
    GPU_SHARE="$(awk -v n="$RAY_ACTORS" 'BEGIN { printf "%.4f", 1 / n }')"
    STEPS_LIST+=(
      "label_gpu_ray|$LABEL --cache $R/label-ray.sqlite --out $R/twc-small.coren-ray.jsonl --report $R/label_coren_gpu_ray.json --judge-actors $RAY_ACTORS --gpus-per-actor $GPU_SHARE --ray=local"
      "same_labels|$PY -m tools.setup.compare_labels coren $R/twc-small.coren.jsonl $R/twc-small.coren-ray.jsonl"
    )
  fi
fi

if [ "$DRY_RUN" = 1 ]; then
  printf 'gpu_check dry run: results in %s, venv %s, CMAKE_ARGS=%s\n' "$RESULTS" "$VENV" "$CMAKE_ARGS"
  for s in "${STEPS_LIST[@]}"; do printf '  %-16s %s\n' "${s%%|*}" "${s#*|}"; done
  exit 0
fi

mkdir -p "$RESULTS/logs"
command -v nvidia-smi >/dev/null 2>&1 || die "no nvidia-smi on PATH: this machine has no NVIDIA driver"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$RESULTS/gpu.txt" 2>&1 \
  || die "nvidia-smi cannot see a GPU ($(head -1 "$RESULTS/gpu.txt"))"
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  die "no CUDA toolkit (nvcc): llama-cpp-python's CUDA build needs it (e.g. apt-get install nvidia-cuda-toolkit)"
fi
command -v nvcc >/dev/null 2>&1 || export PATH="/usr/local/cuda/bin:$PATH"

summary_json="$RESULTS/summary.json"
summary_md="$RESULTS/summary.md"
failed=""
rows=()
{
  printf '# GPU check\n\nGPU: %s\nresults: %s\n\n| step | status | seconds |\n|---|---|---|\n' \
    "$(head -1 "$RESULTS/gpu.txt")" "$RESULTS"
} > "$summary_md"
cd "$ROOT"
for s in "${STEPS_LIST[@]}"; do
  name="${s%%|*}"
  cmd="${s#*|}"
  if [ -n "$failed" ]; then
    status="skipped"
    secs=0
  else
    printf 'gpu_check: %s ...\n' "$name" >&2
    t0=$(date +%s)
    if bash -c "$cmd" > "$RESULTS/logs/$name.log" 2>&1; then status="ok"; else status="failed"; failed="$name"; fi
    secs=$(( $(date +%s) - t0 ))
    printf 'gpu_check: %s %s (%d s)\n' "$name" "$status" "$secs" >&2
  fi
  rows+=("{\"step\": \"$name\", \"status\": \"$status\", \"seconds\": $secs}")
  printf '| %s | %s | %d |\n' "$name" "$status" "$secs" >> "$summary_md"
done
{
  printf '{\n  "gpu": "%s",\n  "model": "%s",\n  "passed": %s,\n  "steps": [\n' \
    "$(head -1 "$RESULTS/gpu.txt" | tr -d '"')" "${MODEL:-gemma3-270m}" "$([ -z "$failed" ] && echo true || echo false)"
  for i in "${!rows[@]}"; do
    printf '    %s%s\n' "${rows[$i]}" "$([ "$i" -lt $((${#rows[@]} - 1)) ] && echo ,)"
  done
  printf '  ]\n}\n'
} > "$summary_json"
if [ -n "$failed" ]; then
  printf 'gpu_check: FAILED at %s: see %s\n' "$failed" "$RESULTS/logs/$failed.log" >&2
  tail -20 "$RESULTS/logs/$failed.log" >&2 || true
  exit 1
fi
printf 'gpu_check: all steps passed; %s\n' "$summary_md" >&2

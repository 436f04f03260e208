#!/usr/bin/env bash
# Creates .venv (if missing) and installs edgejudge with the requested extras.
#
#   tools/setup/bootstrap.sh [EXTRAS]  e.g. tools/setup/bootstrap.sh edge,label,train,env,dev
#
# Idempotent and fast when nothing changed: a stamp file keyed by pyproject.toml and the extras skips pip.
# llama-cpp-python ships only as source on PyPI (~10 min to build on 2 cores), so its wheel is built once per
# machine into a wheel cache outside the checkout (EDGEJUDGE_WHEELS, default ~/.cache/edgejudge/wheels) and reused
# by every later run and every clone. CMAKE_ARGS (e.g. -DGGML_CUDA=on) selects a separate cache folder.
set -euo pipefail

EXTRAS="${1:-edge,label,train,env,dev}"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VENV="${EDGEJUDGE_VENV:-$ROOT/.venv}"
LLAMA_CPP_VERSION="${LLAMA_CPP_VERSION:-0.3.36}"
WHEELS="${EDGEJUDGE_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/edgejudge/wheels}"
# llama.cpp's default build targets this CPU (-march=native), AMX included where the CPU lists it; virtual
# machines that list AMX without granting it crash in the judge's first matrix multiply (SIGSEGV in
# ggml_backend_amx_mul_mat). On x86_64 the default build is therefore AVX2 (x86-64-v3) without AMX; set
# CMAKE_ARGS to build otherwise (e.g. -DGGML_NATIVE=ON, or -DGGML_CUDA=on).
if [ -z "${CMAKE_ARGS:-}" ] && [ "$(uname -m)" = "x86_64" ]; then
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
fi
if [ -n "${CMAKE_ARGS:-}" ]; then
  WHEELS="$WHEELS/cmake-$(printf '%s' "$CMAKE_ARGS" | sha256sum | cut -c1-12)"
fi

# One installer at a time per machine (parallel `make` runs share the venv and the wheel cache).
if [ -z "${EDGEJUDGE_BOOTSTRAP_LOCKED:-}" ] && command -v flock >/dev/null 2>&1; then
  mkdir -p "${XDG_CACHE_HOME:-$HOME/.cache}/edgejudge"
  export EDGEJUDGE_BOOTSTRAP_LOCKED=1
  exec flock "${XDG_CACHE_HOME:-$HOME/.cache}/edgejudge/bootstrap.lock" "$0" "$@"
fi

# This machine's pip config lists extra local indexes that pip warns about once per package: hide only those.
quiet_pip() { "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }

say() { printf '[bootstrap] %s\n' "$*" >&2; }
die() { printf '[bootstrap] error: %s\n' "$*" >&2; exit 1; }

# --- Python -----------------------------------------------------------------------------------------------
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  # torch==2.13.0's CPU build lies on disk for Python 3.11: prefer it.
  for cand in python3.11 python3 python; do
    if command -v "$cand" >/dev/null 2>&1; then PYTHON="$cand"; break; fi
  done
fi
[ -n "$PYTHON" ] || die "no python3 found; install Python >= 3.10"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
  || die "$PYTHON is $("$PYTHON" -V 2>&1); edgejudge needs Python >= 3.10"

# --- Java (textworld-express runs its game engine on the JVM) ----------------------------------------------
case ",$EXTRAS," in
  *,env,*)
    if ! command -v java >/dev/null 2>&1 || ! java -version >/dev/null 2>&1; then
      die "textworld-express needs a Java runtime (11 or newer) and none was found on PATH.
  Debian/Ubuntu: sudo apt-get install -y default-jre-headless    macOS: brew install openjdk"
    fi
    ;;
esac

# --- venv -------------------------------------------------------------------------------------------------
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV with $("$PYTHON" -V 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check --no-input)

stamp_key="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)-$(printf '%s' "$EXTRAS" | tr ',' '_')-$LLAMA_CPP_VERSION-$(printf '%s' "${CMAKE_ARGS:-}" | sha256sum | cut -c1-8)"
stamp="$VENV/.edgejudge-installed-$stamp_key"
if [ -f "$stamp" ]; then
  exit 0
fi

# --- llama-cpp-python wheel cache --------------------------------------------------------------------------
case ",$EXTRAS," in
  *,label,*)
    mkdir -p "$WHEELS"
    if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl >/dev/null 2>&1; then
      say "building llama-cpp-python $LLAMA_CPP_VERSION from source into $WHEELS (once per machine, ~10 min on 2 cores)"
      CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}" \
        "${PIP[@]}" wheel --no-cache-dir --no-deps "llama-cpp-python==$LLAMA_CPP_VERSION" -w "$WHEELS"
    fi
    say "installing llama-cpp-python $LLAMA_CPP_VERSION from the wheel cache"
    quiet_pip "${PIP[@]}" install --quiet --force-reinstall --no-deps --find-links "$WHEELS" "llama-cpp-python==$LLAMA_CPP_VERSION"
    ;;
esac

# --- the project ------------------------------------------------------------------------------------------
say "installing edgejudge[$EXTRAS] into $VENV"
quiet_pip "${PIP[@]}" install --quiet --find-links "$WHEELS" -e "$ROOT[$EXTRAS]"
rm -f "$VENV"/.edgejudge-installed-*
touch "$stamp"
say "ready: $VENV"

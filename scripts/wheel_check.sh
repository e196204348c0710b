#!/usr/bin/env bash
# The wheel as a user gets it: build it, install it (not editable) into a fresh virtual environment
# outside the checkout, and run `eventkg demo` and one ingest of a bundled sample there. The new
# environment reuses the test environment's dependencies (its site-packages on a path line, whose
# editable eventkg is then not active), so nothing is downloaded. Fails if either command fails.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-.venv/bin/python}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | xargs -0 cp --parents -t "$tmp/src"   # the checkout less what git ignores: no build/ or egg-info left in the checkout
"$py" -m pip wheel --no-deps --no-build-isolation -q -w "$tmp/dist" "$tmp/src"
"$py" -m venv "$tmp/venv"
deps=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
own=$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$deps" > "$own/eventkg-test-deps.pth"
"$tmp/venv/bin/python" -m pip install --no-deps --no-index -q "$tmp"/dist/eventkg-*.whl
cd "$tmp"
export EVENTKG_CACHE="$tmp/cache"
where=$(venv/bin/python -c 'import eventkg; print(eventkg.__file__)')
case "$where" in "$tmp"/venv/*) ;; *) echo "wheel check: eventkg imported from $where, not the wheel" >&2; exit 1;; esac
sample=$(venv/bin/python -c 'from importlib.resources import files; print(files("eventkg.ingest") / "samples" / "ev2")')
venv/bin/eventkg --store "$tmp/ingest.lbug" ingest ev2 "$sample"
venv/bin/eventkg --store "$tmp/demo.lbug" demo --out "$tmp/report" --n 5 --negatives random
test -s "$tmp/report/report.md"
echo "wheel check: demo and ingest ran from $(basename "$tmp"/dist/eventkg-*.whl)"

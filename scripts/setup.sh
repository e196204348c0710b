#!/usr/bin/env bash
# Create .venv and install eventkg into it (idempotent; re-running only checks).
#   bash scripts/setup.sh          # runtime
#   bash scripts/setup.sh --dev    # + test and docs tools, WordNet, Chromium, Neo4j jars for the test suite
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# setuptools prints an information-only notice on every editable install of a package-dir layout
# (eventkg.graphstore lives in ./graphstore); it is not a problem, so it is not shown.
export PYTHONWARNINGS="${PYTHONWARNINGS:+$PYTHONWARNINGS,}ignore:Editable installation"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
if [ "${1:-}" = "--dev" ]; then
  .venv/bin/python -m pip install -q -e '.[dev,docs]'
  # Debian packages: WordNet for METEOR (nltk cannot download here), Chromium for the Browser test.
  missing=()
  for pkg in wordnet-base wordnet-sense-index chromium; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
      echo "note: install ${missing[*]} (sudo apt-get install ${missing[*]}) for the METEOR and Browser tests" >&2
    fi
  fi
  # Neo4j 5 Community + Browser jars from Maven Central, resolved once (the tests start a real server),
  # and the JVMs' class-data archives of both class paths, recorded once (~30 s each; see docs/neo4j.md).
  if command -v java >/dev/null && command -v mvn >/dev/null; then
    .venv/bin/eventkg neo4j prepare
    .venv/bin/eventkg neo4j prepare --browser
  else
    echo "note: java 17 and maven are needed for the Neo4j half of the tests" >&2
  fi
else
  .venv/bin/python -m pip install -q -e .
fi

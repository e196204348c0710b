#!/usr/bin/env bash
# Set up (with test tools, WordNet, Chromium and the Neo4j jars), then run the whole test suite
# on both backends (embedded LadybugDB and a real Neo4j 5 server the tests start and stop).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
exec .venv/bin/python -m pytest "$@"

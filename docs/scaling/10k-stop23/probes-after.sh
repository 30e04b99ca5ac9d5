#!/usr/bin/env bash
# stop 23: after go.sh (results-stop23/all-done), the ingest probes of
# stop 22 (10k-stop22/probes.sh) with NEW into the 14-day database s10k_14d
# against an empty one: 3 files of 3 runs of every node in day 16.
#   probes-after.sh NEW_BINARY
set -u
cd "$(dirname "$0")/../../.."
while [[ ! -e /work/data-10k/results-stop23/all-done ]]; do sleep 20; done
R=/work/data-10k/results-stop23 DB14=s10k_14d DAY=16 docs/scaling/10k-stop22/probes.sh "$1"

#!/usr/bin/env bash
# search.sh — the full-text index (package search) on generated stores,
# against grep and rg over the raw files: first build, size, remount,
# appends, queries fresh and warm, and the size it adds to the binary.
# Installs ripgrep with apt when missing (as root). See bench/search/.
#
# Usage: bench/search.sh [--large] [--runs N] [--only A,B] [--out FILE.tsv] [--work DIR] [--reuse]
# --reuse measures the queries only, on the index a run before built in DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--large) args+=(-large) ;;
	--runs | --only | --out | --work) args+=("-${1#--}" "$2"); shift ;;
	--reuse) args+=(-reuse) ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "search.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
if ! command -v rg >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ripgrep >/dev/null || true
fi
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/search" ./bench/search
"$bin/search" "${args[@]}"

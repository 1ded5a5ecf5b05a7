#!/usr/bin/env bash
# test.sh [go test flags] — install what the tests need, then run them all.
#
# Installs (as root, with apt) the tools the tests drive: fuse3, jq, node,
# npm, chromium, tidy and w3m (render's HTML tests), trash-cli (the reference
# for the trash: trash-put, trash-list, trash-restore); the pinned pi package is
# installed by the tests themselves into ~/.cache/pifs. Then runs every test, race detector on.
set -euo pipefail
cd "$(dirname "$0")"

need=()
command -v fusermount3 >/dev/null || need+=(fuse3)
command -v jq >/dev/null || need+=(jq)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v chromium >/dev/null || need+=(chromium)
command -v tidy >/dev/null || need+=(tidy)
command -v w3m >/dev/null || need+=(w3m)
command -v trash-list >/dev/null || need+=(trash-cli)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
	else
		echo "test.sh: please install: ${need[*]} (tests that need them will skip)" >&2
	fi
fi

exec go test -race -count=1 -timeout 30m "$@" ./...

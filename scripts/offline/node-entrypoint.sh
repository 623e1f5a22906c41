#!/bin/sh
# Same rule as the official node image: an option or a non-command runs node.
set -e
if [ "${1#-}" != "$1" ] || ! command -v -- "$1" >/dev/null 2>&1; then
	set -- node "$@"
fi
exec "$@"

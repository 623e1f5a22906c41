#!/bin/sh
# Same behaviour as the official image's entrypoint: "haproxy ..." runs in
# master-worker mode (-W, reload on SIGUSR2) in the foreground (-db).
set -e
if [ "${1#-}" != "$1" ]; then
	set -- haproxy "$@"
fi
if [ "$1" = 'haproxy' ]; then
	shift
	set -- haproxy -W -db "$@"
fi
exec "$@"

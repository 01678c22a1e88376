#!/bin/sh
# An agent-bus from before hook-watch: an unknown command is a usage error, exit 2.
echo "agent-bus: unknown command '$1'" >&2
exit 2

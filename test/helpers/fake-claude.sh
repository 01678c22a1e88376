#!/bin/sh
# A stand-in for `claude --version` in init tests: the version comes from FAKE_CLAUDE_VERSION.
echo "${FAKE_CLAUDE_VERSION:-2.1.332} (Claude Code)"

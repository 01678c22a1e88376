#!/bin/sh
# A stand-in for `claude --version` in init tests: the version comes from FAKE_CLAUDE_VERSION. By
# default one with the wake hook and without hooks its server answers (2.1.332), so init writes
# command hooks unless a test asks for a later one.
echo "${FAKE_CLAUDE_VERSION:-2.1.331} (Claude Code)"

#!/usr/bin/env bash
# The ThreadSanitizer half of scripts/sanitize.sh: builds the project with TSan
# in build-tsan/ and runs the whole test suite there.
exec bash "$(dirname "${BASH_SOURCE[0]}")/sanitize.sh" tsan

#!/bin/sh
# fh_index_stamps.sh: t/unit/fh_index_test's tests that need birth times.
exec "${top_builddir:-.}/t/unit/fh_index_test" stamps

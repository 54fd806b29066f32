#!/bin/sh
# fh_index_reuse.sh: t/unit/fh_index_test's tests that need a file system that re-uses inode numbers.
exec "${top_builddir:-.}/t/unit/fh_index_test" reuse

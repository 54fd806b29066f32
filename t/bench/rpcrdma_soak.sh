#!/bin/sh
# rpcrdma_soak.sh: run the soak (t/bench/rpcrdma_soak) under the TAP driver; `make soak`.
exec "${top_builddir:-.}/t/bench/rpcrdma_soak"

# rpc: sources, programs and tests of this area.

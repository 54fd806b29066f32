# lab: sources, programs and tests of this area.

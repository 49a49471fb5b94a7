"""Tools around the compiler: verify, inspect, conformance, emulation, FLOP counts, op support."""

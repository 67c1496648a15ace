"""Compiling and memory, with no game in it: numba's cache, functions compiled on first use, SIMD lanes, reused arrays."""

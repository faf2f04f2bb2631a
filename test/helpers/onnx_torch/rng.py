"""Bit-exact twin of pdc's dropout stream (runtime/include/pdrt/pdrt_random.h).

Philox4x32-10 keyed by the run's seed; counter (element index // 4, rng_id,
microbatch key low, high); u = (word >> 8) * 2^-24; an element is kept when
u >= ratio (ratio as float32). The microbatch key is t*m*W + r*m + i, the
position in the run of microbatch i of replica r at step t.
"""
import numpy as np

_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(counter, k0, k1):
    """counter: 4 uint64 arrays holding 32-bit words; returns 4 such arrays."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in counter)
    for r in range(10):
        if r:
            k0 = (k0 + _W0) & 0xFFFFFFFF
            k1 = (k1 + _W1) & 0xFFFFFFFF
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & _MASK32,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & _MASK32)
    return c0, c1, c2, c3


def dropout_keep(n, ratio, seed, rng_id, microbatch_key):
    """The keep mask (numpy bool, n elements) of one dropout op."""
    blocks = np.arange((n + 3) // 4, dtype=np.uint64)
    key = int(microbatch_key)
    counter = (blocks, np.full_like(blocks, rng_id),
               np.full_like(blocks, key & 0xFFFFFFFF), np.full_like(blocks, key >> 32))
    words = np.stack(philox4x32_10(counter, seed & 0xFFFFFFFF,
                                   (seed >> 32) & 0xFFFFFFFF), axis=1).reshape(-1)[:n]
    u = (words >> np.uint64(8)).astype(np.float32) * np.float32(1.0 / 16777216.0)
    return u >= np.float32(ratio)


def microbatch_key(step, index, microbatches, replicas=1, replica=0):
    """t*m*W + r*m + i: the position of a microbatch's samples in the run."""
    return (step * microbatches * replicas + replica * microbatches + index)

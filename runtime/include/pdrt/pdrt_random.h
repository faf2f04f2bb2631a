/*===- pdrt_random.h - Counter-based random numbers for dropout -*- C++ -*-===//
 *
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC'11; the generator of cuRAND and of PyTorch's CUDA dropout): a
 * keyed bijection of a 128-bit counter, so every element's random number
 * is a pure function of (key, counter) and any kernel, forward, backward
 * or recomputed, on any device, draws the same one.
 *
 * Dropout's stream: key = (seed low 32 bits, seed high 32 bits); counter =
 * (element index / 4, rng_id, microbatch key low, high), one Philox call
 * giving the uniforms of 4 consecutive elements. The microbatch key is
 * t*m*W + r*m + i for microbatch i of replica r at step t (0-based), the
 * position of the microbatch's samples in the whole run. u = (word >> 8) *
 * 2^-24 is exact in float32 and lies in [0, 1); an element is kept when
 * u >= ratio. test/helpers/onnx_torch/rng.py is the bit-exact twin.
 * Header-only and host/device compatible, like pdrt_numerics.h.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_RANDOM_H
#define PDRT_PDRT_RANDOM_H

#include "pdrt/pdrt_numerics.h" /* PDRT_HD */

typedef struct pdrt_philox4 {
  uint32_t v[4];
} pdrt_philox4;

/// One Philox4x32 round: two 32x32 -> 64-bit products mixed with the key.
PDRT_HD pdrt_philox4 pdrt_philox_round(pdrt_philox4 c, uint32_t k0,
                                       uint32_t k1) {
  uint64_t p0 = (uint64_t)0xD2511F53u * c.v[0];
  uint64_t p1 = (uint64_t)0xCD9E8D57u * c.v[2];
  pdrt_philox4 out;
  out.v[0] = (uint32_t)(p1 >> 32) ^ c.v[1] ^ k0;
  out.v[1] = (uint32_t)p1;
  out.v[2] = (uint32_t)(p0 >> 32) ^ c.v[3] ^ k1;
  out.v[3] = (uint32_t)p0;
  return out;
}

/// Philox4x32-10 of counter `c` under key (k0, k1).
PDRT_HD pdrt_philox4 pdrt_philox4x32_10(pdrt_philox4 c, uint32_t k0,
                                        uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    c = pdrt_philox_round(c, k0, k1);
  }
  return c;
}

/// The uniform in [0, 1) of a 32-bit random word (its top 24 bits).
PDRT_HD float pdrt_uniform24(uint32_t word) {
  return (float)(word >> 8) * (1.0f / 16777216.0f);
}

/// The 4 dropout uniforms of elements [4*block, 4*block + 4).
PDRT_HD pdrt_philox4 pdrt_dropout_block(uint64_t seed, uint32_t rng_id,
                                        uint64_t microbatch_key,
                                        uint32_t block) {
  pdrt_philox4 c;
  c.v[0] = block;
  c.v[1] = rng_id;
  c.v[2] = (uint32_t)microbatch_key;
  c.v[3] = (uint32_t)(microbatch_key >> 32);
  return pdrt_philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

#endif /* PDRT_PDRT_RANDOM_H */

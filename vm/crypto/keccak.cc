#include "vm/crypto/keccak.h"

#include <bit>
#include <cstddef>

namespace flamefleet::vm {
namespace {

// The iota round constants (Keccak reference, "The round constants").
constexpr uint64_t kRoundConstants[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808AULL, 0x8000000080008000ULL,
    0x000000000000808BULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008AULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000AULL,
    0x000000008000808BULL, 0x800000000000008BULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800AULL, 0x800000008000000AULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

// The rho offsets r[x + 5y].
constexpr int kRho[25] = {0,  1,  62, 28, 27, 36, 44, 6,  55, 20, 3,  10, 43,
                          25, 39, 41, 45, 15, 21, 8,  18, 2,  61, 56, 14};

constexpr size_t kRateBytes = 136;  // (1600 - 2 * 256) / 8

}  // namespace

void KeccakF1600(std::array<uint64_t, 25>& a) {
  for (uint64_t rc : kRoundConstants) {
    // theta
    uint64_t c[5], d[5];
    for (int x = 0; x < 5; ++x) c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
    for (int x = 0; x < 5; ++x) d[x] = c[(x + 4) % 5] ^ std::rotl(c[(x + 1) % 5], 1);
    for (int i = 0; i < 25; ++i) a[i] ^= d[i % 5];
    // rho and pi: B[y, 2x + 3y] = rot(A[x, y], r[x, y])
    std::array<uint64_t, 25> b;
    for (int x = 0; x < 5; ++x) {
      for (int y = 0; y < 5; ++y) {
        b[y + 5 * ((2 * x + 3 * y) % 5)] = std::rotl(a[x + 5 * y], kRho[x + 5 * y]);
      }
    }
    // chi
    for (int y = 0; y < 5; ++y) {
      for (int x = 0; x < 5; ++x) {
        a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
      }
    }
    // iota
    a[0] ^= rc;
  }
}

std::array<uint8_t, 32> Keccak256(std::span<const uint8_t> bytes) {
  std::array<uint64_t, 25> state{};
  auto absorb = [&state](const uint8_t* block) {
    for (size_t i = 0; i < kRateBytes / 8; ++i) {
      uint64_t lane = 0;
      for (int j = 7; j >= 0; --j) lane = (lane << 8) | block[8 * i + j];  // little-endian
      state[i] ^= lane;
    }
    KeccakF1600(state);
  };
  size_t off = 0;
  for (; bytes.size() - off >= kRateBytes; off += kRateBytes) absorb(bytes.data() + off);
  // pad10*1: a 1 bit after the message, a 1 bit at the end of the block (the same byte when
  // only one byte is left).
  uint8_t last[kRateBytes] = {};
  for (size_t i = off; i < bytes.size(); ++i) last[i - off] = bytes[i];
  last[bytes.size() - off] ^= 0x01;
  last[kRateBytes - 1] ^= 0x80;
  absorb(last);
  std::array<uint8_t, 32> out;
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(state[i / 8] >> (8 * (i % 8)));
  return out;
}

}  // namespace flamefleet::vm

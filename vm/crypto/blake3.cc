#include "vm/crypto/blake3.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"

namespace flamefleet::vm {
namespace {

// Sizes and domain flags as BLAKE3 defines them.
constexpr size_t kBlockLen = 64;
constexpr size_t kChunkLen = 1024;
constexpr uint32_t kChunkStart = 1u << 0;
constexpr uint32_t kChunkEnd = 1u << 1;
constexpr uint32_t kParent = 1u << 2;
constexpr uint32_t kRoot = 1u << 3;

// The initialisation vector (the same constants as SHA-256's initial hash value).
constexpr std::array<uint32_t, 8> kIv = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                                         0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};

// The message word permutation applied between rounds.
constexpr std::array<uint8_t, 16> kMsgPermutation = {2, 6,  3,  10, 7, 0,  4,  13,
                                                     1, 11, 12, 5,  9, 14, 15, 8};

using ChainingValue = std::array<uint32_t, 8>;
using BlockWords = std::array<uint32_t, 16>;

constexpr uint32_t RotateRight(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// The quarter-round mixing function G.
inline void Mix(std::array<uint32_t, 16>& s, int a, int b, int c, int d, uint32_t mx, uint32_t my) {
  s[a] = s[a] + s[b] + mx;
  s[d] = RotateRight(s[d] ^ s[a], 16);
  s[c] = s[c] + s[d];
  s[b] = RotateRight(s[b] ^ s[c], 12);
  s[a] = s[a] + s[b] + my;
  s[d] = RotateRight(s[d] ^ s[a], 8);
  s[c] = s[c] + s[d];
  s[b] = RotateRight(s[b] ^ s[c], 7);
}

void Round(std::array<uint32_t, 16>& s, const BlockWords& m) {
  // Columns.
  Mix(s, 0, 4, 8, 12, m[0], m[1]);
  Mix(s, 1, 5, 9, 13, m[2], m[3]);
  Mix(s, 2, 6, 10, 14, m[4], m[5]);
  Mix(s, 3, 7, 11, 15, m[6], m[7]);
  // Diagonals.
  Mix(s, 0, 5, 10, 15, m[8], m[9]);
  Mix(s, 1, 6, 11, 12, m[10], m[11]);
  Mix(s, 2, 7, 8, 13, m[12], m[13]);
  Mix(s, 3, 4, 9, 14, m[14], m[15]);
}

// The compression function; returns the first 8 words of the output state (all that the default
// 32-byte output needs).
ChainingValue Compress(const ChainingValue& cv, const BlockWords& block, uint64_t counter,
                       uint32_t block_len, uint32_t flags) {
  std::array<uint32_t, 16> s = {cv[0],
                                cv[1],
                                cv[2],
                                cv[3],
                                cv[4],
                                cv[5],
                                cv[6],
                                cv[7],
                                kIv[0],
                                kIv[1],
                                kIv[2],
                                kIv[3],
                                static_cast<uint32_t>(counter),
                                static_cast<uint32_t>(counter >> 32),
                                block_len,
                                flags};
  BlockWords m = block;
  for (int round = 0; round < 7; ++round) {
    Round(s, m);
    if (round == 6) break;
    BlockWords permuted;
    for (size_t i = 0; i < 16; ++i) permuted[i] = m[kMsgPermutation[i]];
    m = permuted;
  }
  ChainingValue out;
  for (size_t i = 0; i < 8; ++i) out[i] = s[i] ^ s[i + 8];
  return out;
}

// Reads up to 64 bytes as 16 little-endian words, zero-padding a short block.
BlockWords LoadBlock(const uint8_t* bytes, size_t len) {
  std::array<uint8_t, kBlockLen> buf{};
  std::copy(bytes, bytes + len, buf.begin());
  BlockWords words;
  for (size_t i = 0; i < 16; ++i) {
    words[i] = static_cast<uint32_t>(buf[4 * i]) | (static_cast<uint32_t>(buf[4 * i + 1]) << 8) |
               (static_cast<uint32_t>(buf[4 * i + 2]) << 16) |
               (static_cast<uint32_t>(buf[4 * i + 3]) << 24);
  }
  return words;
}

// The inputs of one compression that has not run yet: the last block of a chunk, or a parent node.
// It is kept pending because only the very last compression gets the ROOT flag.
struct PendingOutput {
  ChainingValue cv;
  BlockWords block;
  uint64_t counter = 0;
  uint32_t block_len = 0;
  uint32_t flags = 0;

  ChainingValue ChainValue() const { return Compress(cv, block, counter, block_len, flags); }
  ChainingValue RootValue() const { return Compress(cv, block, 0, block_len, flags | kRoot); }
};

// Compresses all blocks of one chunk (1 to 1024 bytes; 0 bytes only for the empty input) but the
// last, and returns the last one pending.
PendingOutput ChunkOutput(const uint8_t* data, size_t len, uint64_t chunk_counter) {
  ChainingValue cv = kIv;
  size_t offset = 0;
  uint32_t start_flag = kChunkStart;
  while (len - offset > kBlockLen) {
    cv = Compress(cv, LoadBlock(data + offset, kBlockLen), chunk_counter, kBlockLen, start_flag);
    start_flag = 0;
    offset += kBlockLen;
  }
  const size_t last_len = len - offset;
  return PendingOutput{cv, LoadBlock(data + offset, last_len), chunk_counter,
                       static_cast<uint32_t>(last_len), start_flag | kChunkEnd};
}

PendingOutput ParentOutput(const ChainingValue& left, const ChainingValue& right) {
  BlockWords block;
  std::copy(left.begin(), left.end(), block.begin());
  std::copy(right.begin(), right.end(), block.begin() + 8);
  return PendingOutput{kIv, block, 0, static_cast<uint32_t>(kBlockLen), kParent};
}

}  // namespace

std::array<uint8_t, 32> Blake3(absl::string_view data) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t len = data.size();
  const uint64_t num_chunks = len == 0 ? 1 : (len + kChunkLen - 1) / kChunkLen;

  PendingOutput root;
  if (num_chunks == 1) {
    root = ChunkOutput(bytes, len, 0);
  } else {
    // The spec's incremental tree: a stack of completed subtree chaining values. After chunk k
    // (except the last) is added, merge as many times as there are trailing zero bits in k+1, which
    // keeps every subtree a complete, left-leaning power of two.
    std::vector<ChainingValue> stack;
    for (uint64_t chunk = 0; chunk + 1 < num_chunks; ++chunk) {
      ChainingValue cv = ChunkOutput(bytes + chunk * kChunkLen, kChunkLen, chunk).ChainValue();
      for (uint64_t total = chunk + 1; (total & 1) == 0; total >>= 1) {
        cv = ParentOutput(stack.back(), cv).ChainValue();
        stack.pop_back();
      }
      stack.push_back(cv);
    }
    const uint64_t last = num_chunks - 1;
    const size_t last_offset = static_cast<size_t>(last * kChunkLen);
    root = ChunkOutput(bytes + last_offset, len - last_offset, last);
    // Fold the stack from the right; the final parent is the root.
    while (!stack.empty()) {
      root = ParentOutput(stack.back(), root.ChainValue());
      stack.pop_back();
    }
  }

  const ChainingValue words = root.RootValue();
  std::array<uint8_t, 32> out;
  for (size_t i = 0; i < 8; ++i) {
    for (size_t b = 0; b < 4; ++b) {
      out[4 * i + b] = static_cast<uint8_t>(words[i] >> (8 * b));
    }
  }
  return out;
}

}  // namespace flamefleet::vm

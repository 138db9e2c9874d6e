#include "vm/executor/precompiles.h"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <secp256k1.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vm/crypto/keccak.h"

namespace flamefleet::vm {
namespace {

constexpr uint64_t kU32Max = 0xFFFFFFFFULL;

// The handler's view of the VM (valid during one RunPrecompile call).
struct PrecompileInputs {
  PrecompileStack stack;
  PrecompileMemory memory;
};

// Reads `len_bytes` bytes packed 4 per element (little-endian) from the word-aligned `start`
// (read_memory_packed_u32 of crates/lib/core/src/handlers/mod.rs at v0.25.7, same checks in
// the same order). `what` names the data in errors.
absl::StatusOr<std::vector<uint8_t>> ReadPackedBytes(const PrecompileInputs& in, uint64_t start,
                                                     uint64_t len_bytes, const char* what) {
  auto fail = [what](std::string why) {
    return absl::FailedPreconditionError(absl::StrCat("failed to read ", what, ": ", why));
  };
  if (start % 4 != 0) {
    return fail(absl::StrCat("address ", start, " is not word-aligned (must be divisible by 4)"));
  }
  const uint64_t len_felts = (len_bytes + 3) / 4;  // len_bytes <= 2^20 or a fixed size
  const uint64_t end = start + len_felts;
  if (start > kU32Max || end > kU32Max) {
    return fail(absl::StrCat("address overflow: start=", start, ", len_bytes=", len_bytes));
  }
  std::vector<uint8_t> out;
  out.reserve(len_felts * 4);
  for (uint64_t a = start; a < end; ++a) {
    const std::optional<Felt> v = in.memory(static_cast<uint32_t>(a));
    if (!v.has_value()) return fail(absl::StrCat("failed to read memory at address ", a));
    if (v->value() > kU32Max) {
      return fail(
          absl::StrCat("field element value ", v->value(), " at address ", a, " exceeds u32::MAX"));
    }
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(v->value() >> (8 * b)));
  }
  for (uint64_t i = len_bytes; i < out.size(); ++i) {
    if (out[i] != 0) {
      return fail(
          absl::StrCat("non-zero padding byte 0x", absl::Hex(out[i]), " at byte position ", i));
    }
  }
  out.resize(len_bytes);
  return out;
}

// Digest bytes as u32 limbs: limb i = LE u32 of bytes 4i..4i+3.
std::vector<Felt> Limbs(std::span<const uint8_t> digest) {
  std::vector<Felt> out;
  out.reserve(digest.size() / 4);
  for (size_t i = 0; i + 4 <= digest.size(); i += 4) {
    out.push_back(Felt(uint64_t{digest[i]} | uint64_t{digest[i + 1]} << 8 |
                       uint64_t{digest[i + 2]} << 16 | uint64_t{digest[i + 3]} << 24));
  }
  return out;
}

absl::StatusOr<PrecompileAnswer> HashBytes(Precompile which, uint64_t event_id,
                                           const PrecompileInputs& in) {
  const char* name = which == Precompile::kKeccak256 ? "keccak256" : "sha512";
  const uint64_t ptr = in.stack(1).value(), len = in.stack(2).value();
  if (len > kMaxPrecompileHashBytes) {
    return absl::InvalidArgumentError(absl::StrCat(name, " input length ", len,
                                                   " bytes exceeds maximum of ",
                                                   kMaxPrecompileHashBytes, " bytes"));
  }
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadPackedBytes(in, ptr, len, "the input");
  if (!bytes.ok())
    return absl::FailedPreconditionError(absl::StrCat(name, ": ", bytes.status().message()));
  PrecompileAnswer answer;
  if (which == Precompile::kKeccak256) {
    answer.advice = Limbs(Keccak256(*bytes));
  } else {
    answer.advice = Limbs(Sha512(*bytes));
  }
  answer.request = PrecompileRequest{event_id, *std::move(bytes)};
  return answer;
}

const secp256k1_context* Secp256k1() {
  static const secp256k1_context* const ctx = secp256k1_context_create(SECP256K1_CONTEXT_VERIFY);
  return ctx;
}

// Parses the uncompressed SEC1 key 04 || x || y: libsecp256k1 checks that (x, y) is on the curve,
// as k256 decodes x with the parity of y and the handler then compares y.
bool Secp256k1Parse(std::span<const uint8_t, 32> x, std::span<const uint8_t, 32> y,
                    secp256k1_pubkey* key) {
  uint8_t sec1[65];
  sec1[0] = 0x04;
  std::copy(x.begin(), x.end(), sec1 + 1);
  std::copy(y.begin(), y.end(), sec1 + 33);
  return secp256k1_ec_pubkey_parse(Secp256k1(), key, sec1, sizeof(sec1)) == 1;
}

bool Secp256k1KeyParses(std::span<const uint8_t, 32> x, std::span<const uint8_t, 32> y) {
  secp256k1_pubkey key;
  return Secp256k1Parse(x, y, &key);
}

absl::StatusOr<PrecompileAnswer> Ecdsa(uint64_t event_id, const PrecompileInputs& in) {
  const uint64_t ptr_pk = in.stack(1).value(), ptr_digest = in.stack(2).value(),
                 ptr_sig = in.stack(3).value();
  auto err = [](const absl::Status& s) {
    return absl::FailedPreconditionError(absl::StrCat("ecdsa_k256_keccak::verify: ", s.message()));
  };
  // The order of the upstream handler: public key, signature, digest.
  absl::StatusOr<std::vector<uint8_t>> pk = ReadPackedBytes(in, ptr_pk, 64, "public key");
  if (!pk.ok()) return err(pk.status());
  // The key is 16 u32 limbs, qx then qy, limb 0 least significant: qx and qy little-endian.
  std::array<uint8_t, 32> x, y;
  std::reverse_copy(pk->begin(), pk->begin() + 32, x.begin());
  std::reverse_copy(pk->begin() + 32, pk->end(), y.begin());
  // As upstream, the key is decoded before the signature is read.
  if (!Secp256k1KeyParses(x, y)) {
    return err(absl::InvalidArgumentError(
        "failed to deserialize public key: invalid public key coordinates"));
  }
  absl::StatusOr<std::vector<uint8_t>> sig = ReadPackedBytes(in, ptr_sig, 65, "signature");
  if (!sig.ok()) return err(sig.status());
  if ((*sig)[64] > 3) {
    return err(absl::InvalidArgumentError("failed to deserialize signature: Invalid recovery ID"));
  }
  absl::StatusOr<std::vector<uint8_t>> digest = ReadPackedBytes(in, ptr_digest, 32, "digest");
  if (!digest.ok()) return err(digest.status());
  absl::StatusOr<bool> valid =
      Secp256k1VerifyPrehash(x, y, std::span<const uint8_t, 32>(digest->data(), 32),
                             std::span<const uint8_t, 32>(sig->data(), 32),
                             std::span<const uint8_t, 32>(sig->data() + 32, 32));
  if (!valid.ok()) return err(valid.status());
  PrecompileAnswer answer;
  answer.advice = {Felt(*valid ? 1 : 0)};
  std::vector<uint8_t> calldata = *std::move(pk);
  calldata.insert(calldata.end(), digest->begin(), digest->end());
  calldata.insert(calldata.end(), sig->begin(), sig->end());
  answer.request = PrecompileRequest{event_id, std::move(calldata)};
  return answer;
}

struct BnCtxFree {
  void operator()(BN_CTX* c) const { BN_CTX_free(c); }
};
struct BnFree {
  void operator()(BIGNUM* b) const { BN_free(b); }
};
using Bn = std::unique_ptr<BIGNUM, BnFree>;

// Whether the 32 bytes decode to an Edwards25519 point as curve25519-dalek decompresses them:
// y = the low 255 bits mod p, and (y^2 - 1) / (d y^2 + 1) must be a square (the sign bit
// never rejects). OpenSSL's verification returns 0 for a key that does not decode; upstream
// fails the event, so the check is made here.
bool Ed25519Decodes(std::span<const uint8_t, 32> pk) {
  std::unique_ptr<BN_CTX, BnCtxFree> ctx(BN_CTX_new());
  uint8_t le[32];
  std::copy(pk.begin(), pk.end(), le);
  le[31] &= 0x7F;
  Bn p(BN_new()), y(BN_lebin2bn(le, 32, nullptr)), t(BN_new()), u(BN_new()), v(BN_new()),
      d(BN_new()), e(BN_new());
  // p = 2^255 - 19; d = -121665 / 121666 mod p.
  BN_set_bit(p.get(), 255);
  BN_sub_word(p.get(), 19);
  BN_set_word(t.get(), 121666);
  BN_mod_inverse(t.get(), t.get(), p.get(), ctx.get());
  BN_set_word(d.get(), 121665);
  BN_mod_sub(d.get(), p.get(), d.get(), p.get(), ctx.get());  // -121665
  BN_mod_mul(d.get(), d.get(), t.get(), p.get(), ctx.get());
  BN_nnmod(y.get(), y.get(), p.get(), ctx.get());
  BN_mod_sqr(t.get(), y.get(), p.get(), ctx.get());                  // y^2
  BN_mod_sub(u.get(), t.get(), BN_value_one(), p.get(), ctx.get());  // y^2 - 1
  BN_mod_mul(v.get(), d.get(), t.get(), p.get(), ctx.get());
  BN_mod_add(v.get(), v.get(), BN_value_one(), p.get(), ctx.get());  // d y^2 + 1 (never 0)
  BN_mod_inverse(v.get(), v.get(), p.get(), ctx.get());
  BN_mod_mul(t.get(), u.get(), v.get(), p.get(), ctx.get());  // x^2
  if (BN_is_zero(t.get())) return true;
  BN_rshift1(e.get(), p.get());  // (p - 1) / 2
  BN_mod_exp(t.get(), t.get(), e.get(), p.get(), ctx.get());
  return BN_is_one(t.get());
}

absl::StatusOr<PrecompileAnswer> Eddsa(uint64_t event_id, const PrecompileInputs& in) {
  const uint64_t ptr_pk = in.stack(1).value(), ptr_msg = in.stack(2).value(),
                 ptr_sig = in.stack(3).value();
  auto err = [](const absl::Status& s) {
    return absl::FailedPreconditionError(absl::StrCat("eddsa_ed25519::verify: ", s.message()));
  };
  absl::StatusOr<std::vector<uint8_t>> pk = ReadPackedBytes(in, ptr_pk, 32, "public key");
  if (!pk.ok()) return err(pk.status());
  // As upstream, the key is decoded before the message is read (an error, not a result of 0).
  if (!Ed25519Decodes(std::span<const uint8_t, 32>(pk->data(), 32))) {
    return err(absl::InvalidArgumentError("failed to deserialize public key: not a curve point"));
  }
  absl::StatusOr<std::vector<uint8_t>> msg = ReadPackedBytes(in, ptr_msg, 32, "message");
  if (!msg.ok()) return err(msg.status());
  absl::StatusOr<std::vector<uint8_t>> sig = ReadPackedBytes(in, ptr_sig, 64, "signature");
  if (!sig.ok()) return err(sig.status());
  absl::StatusOr<bool> valid = Ed25519Verify(std::span<const uint8_t, 32>(pk->data(), 32), *msg,
                                             std::span<const uint8_t, 64>(sig->data(), 64));
  if (!valid.ok()) return err(valid.status());
  // The message is a Word: four canonical felts of 8 little-endian bytes each; one that is not
  // canonical makes the result 0 (EddsaRequest::result).
  for (int i = 0; i < 4; ++i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | (*msg)[8 * i + b];
    if (!Felt::IsCanonical(v)) valid = false;
  }
  PrecompileAnswer answer;
  answer.advice = {Felt(*valid ? 1 : 0)};
  std::vector<uint8_t> calldata = *std::move(pk);
  calldata.insert(calldata.end(), msg->begin(), msg->end());
  calldata.insert(calldata.end(), sig->begin(), sig->end());
  answer.request = PrecompileRequest{event_id, std::move(calldata)};
  return answer;
}

// AEAD-Poseidon2 decryption (miden-crypto v0.28.0 aead_poseidon2, no associated data) as
// handlers/aead_decrypt.rs at v0.25.7 calls it.
absl::StatusOr<PrecompileAnswer> AeadDecrypt(const PrecompileInputs& in, const Hasher& hasher) {
  auto err = [](std::string why) {
    return absl::FailedPreconditionError(absl::StrCat("aead::decrypt: ", why));
  };
  // Stack words are little-endian: element at position N is the word's element 0.
  HasherState state{};
  for (int i = 0; i < 4; ++i) {
    state[i] = in.stack(1 + i);      // key
    state[4 + i] = in.stack(5 + i);  // nonce
  }
  const uint64_t src = in.stack(9).value(), num_blocks = in.stack(11).value();
  if (num_blocks > kMaxAeadPlaintextElements / 8) {
    return err("size overflow in AEAD decrypt handler");
  }
  const uint64_t n_cipher = (num_blocks + 1) * 8;
  const uint64_t tag_ptr = src + n_cipher;  // src < p < 2^64 - 2^21: no overflow
  auto read_fail = [&](uint64_t addr, uint64_t len) {
    return err(absl::StrCat("failed to read memory region at addr=", addr, ", len=", len));
  };
  // read_memory_region: src must be a word-aligned u32, src + len a u32, every word written.
  if (src > kU32Max || src % 4 != 0 || src + n_cipher > kU32Max) return read_fail(src, n_cipher);
  std::vector<Felt> cipher;
  cipher.reserve(n_cipher);
  for (uint64_t a = src; a < src + n_cipher; ++a) {
    std::optional<Felt> v = in.memory(static_cast<uint32_t>(a));
    if (!v.has_value()) return read_fail(src, n_cipher);
    cipher.push_back(*v);
  }
  if (tag_ptr > kU32Max - 3) return read_fail(tag_ptr, 4);
  Felt tag[4];
  for (int i = 0; i < 4; ++i) {
    std::optional<Felt> v = in.memory(static_cast<uint32_t>(tag_ptr + i));
    if (!v.has_value()) return read_fail(tag_ptr, 4);
    tag[i] = *v;
  }
  // Sponge: rate = state[0..8] (key, nonce), capacity state[8..12] = 0. The empty associated
  // data is the padding block [1, 0, ...] absorbed by duplex_overwrite.
  hasher.Permute(state);
  state[8] += Felt(1);
  for (int i = 0; i < 8; ++i) state[i] = Felt(i == 0 ? 1 : 0);
  std::vector<Felt> plain;
  plain.reserve(n_cipher);
  for (uint64_t b = 0; b < n_cipher; b += 8) {
    hasher.Permute(state);
    for (int i = 0; i < 8; ++i) {
      plain.push_back(cipher[b + i] - state[i]);
      state[i] = cipher[b + i];
    }
  }
  hasher.Permute(state);
  for (int i = 0; i < 4; ++i) {
    if (state[i] != tag[i]) return err("authentication tag verification failed");
  }
  // unpad: the last block must hold a 1 (the padding marker).
  bool has_one = false;
  for (uint64_t i = n_cipher - 8; i < n_cipher; ++i) has_one |= plain[i] == Felt(1);
  if (!has_one) return err("malformed padding");
  plain.resize(num_blocks * 8);
  PrecompileAnswer answer;
  answer.advice = std::move(plain);
  return answer;
}

}  // namespace

std::array<uint8_t, 64> Sha512(std::span<const uint8_t> bytes) {
  std::array<uint8_t, 64> out;
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, EVP_sha512(), nullptr);
  return out;
}

absl::StatusOr<bool> Ed25519Verify(std::span<const uint8_t, 32> pk,
                                   std::span<const uint8_t> message,
                                   std::span<const uint8_t, 64> sig) {
  if (!Ed25519Decodes(pk)) {
    return absl::InvalidArgumentError("failed to deserialize public key: not a curve point");
  }
  EVP_PKEY* key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, pk.data(), pk.size());
  if (key == nullptr) return absl::InternalError("OpenSSL: cannot make an Ed25519 key");
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  bool ok = md != nullptr && EVP_DigestVerifyInit(md, nullptr, nullptr, nullptr, key) == 1 &&
            EVP_DigestVerify(md, sig.data(), sig.size(), message.data(), message.size()) == 1;
  EVP_MD_CTX_free(md);
  EVP_PKEY_free(key);
  return ok;
}

absl::StatusOr<bool> Secp256k1VerifyPrehash(std::span<const uint8_t, 32> x,
                                            std::span<const uint8_t, 32> y,
                                            std::span<const uint8_t, 32> digest,
                                            std::span<const uint8_t, 32> r,
                                            std::span<const uint8_t, 32> s) {
  secp256k1_pubkey key;
  if (!Secp256k1Parse(x, y, &key)) {
    return absl::InvalidArgumentError(
        "failed to deserialize public key: invalid public key coordinates");
  }
  uint8_t compact[64];
  std::copy(r.begin(), r.end(), compact);
  std::copy(s.begin(), s.end(), compact + 32);
  secp256k1_ecdsa_signature signature;
  // r or s >= n: k256's Signature::from_scalars fails, and verify_prehash returns false.
  if (secp256k1_ecdsa_signature_parse_compact(Secp256k1(), &signature, compact) != 1) return false;
  return secp256k1_ecdsa_verify(Secp256k1(), &signature, digest.data(), &key) == 1;
}

absl::StatusOr<PrecompileAnswer> RunPrecompile(Precompile which, uint64_t event_id,
                                               PrecompileStack stack, PrecompileMemory memory,
                                               const Hasher& poseidon2) {
  const PrecompileInputs in{stack, memory};
  switch (which) {
    case Precompile::kKeccak256:
    case Precompile::kSha512:
      return HashBytes(which, event_id, in);
    case Precompile::kEcdsaK256Keccak:
      return Ecdsa(event_id, in);
    case Precompile::kEddsaEd25519:
      return Eddsa(event_id, in);
    case Precompile::kAeadDecrypt:
      return AeadDecrypt(in, poseidon2);
  }
  return absl::InternalError("unknown precompile");
}

}  // namespace flamefleet::vm

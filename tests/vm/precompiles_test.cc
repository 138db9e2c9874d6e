// Tests of the host-computed precompiles (vm/executor/precompiles.h): the primitives against
// published vectors, and the handlers' memory reading, byte packing, advice order, results for
// invalid signatures and errors, as crates/lib/core/src/handlers/*.rs at v0.25.7 define them.
//
// Vectors: Keccak-256 from the Keccak team's KAT (KeccakKAT-3, ShortMsgKAT_256: Len = 0, 8, 16,
// 32) and, for the multi-block inputs, from the independent Python model; SHA-512 from FIPS
// 180-2 appendix C ("abc", the 896-bit message) and the empty string; Ed25519 from RFC 8032
// section 7.1 (TEST 1, TEST 2); the secp256k1 signature and the Ed25519 signature of a 32-byte
// message were made with Python's `cryptography` (OpenSSL) for this test.
#include "vm/executor/precompiles.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vm/crypto/keccak.h"
#include "vm/crypto/poseidon2.h"

namespace flamefleet::vm {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::vector<uint8_t> Bytes(absl::string_view hex) {
  std::string raw = absl::HexStringToBytes(hex);
  return std::vector<uint8_t>(raw.begin(), raw.end());
}

template <size_t N>
std::string Hex(const std::array<uint8_t, N>& d) {
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(d.data()), N));
}

TEST(Keccak256Test, KnownAnswers) {
  EXPECT_EQ(Hex(Keccak256({})), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  EXPECT_EQ(Hex(Keccak256(Bytes("cc"))),
            "eead6dbfc7340a56caedc044696a168870549a6a7f6f56961e84a54bd9970b8a");
  EXPECT_EQ(Hex(Keccak256(Bytes("41fb"))),
            "a8eaceda4d47b3281a795ad9e1ea2122b407baf9aabcb9e18b5717b7873537d2");
  EXPECT_EQ(Hex(Keccak256(Bytes("c1ecfdfc"))),
            "b149e766d7612eaf7d55f74e1a4fdd63709a8115b14f61fcd22aa4abc8b8e122");
}

TEST(Keccak256Test, BlockBoundaries) {
  // 136 bytes fill the rate exactly (the padding is a block of its own); 200 span two blocks.
  std::vector<uint8_t> b(200);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(Hex(Keccak256(std::span<const uint8_t>(b).first(136))),
            "7ce759f1ab7f9ce437719970c26b0a66ff11fe3e38e17df89cf5d29c7d7f807e");
  EXPECT_EQ(Hex(Keccak256(b)), "bfb0aa97863e797943cf7c33bb7e880bb4543f3d2703c0923c6901c2af57b890");
}

TEST(Sha512Test, NistVectors) {
  const std::string abc = "abc";
  EXPECT_EQ(Hex(Sha512(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(abc.data()), 3))),
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
            "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
  EXPECT_EQ(Hex(Sha512({})),
            "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
            "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e");
  const std::string m896 =
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlm"
      "nopqrsmnopqrstnopqrstu";
  EXPECT_EQ(Hex(Sha512(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(m896.data()),
                                                m896.size()))),
            "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
            "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909");
}

// RFC 8032 7.1 TEST 1 (empty message) and TEST 2 (one byte 0x72).
constexpr char kRfc1Pk[] = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
constexpr char kRfc1Sig[] =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9"
    "b46bd25bf5f0595bbe24655141438e7a100b";
constexpr char kRfc2Pk[] = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";
constexpr char kRfc2Sig[] =
    "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f1"
    "1d8c387b2eaeb4302aeeb00d291612bb0c00";

absl::StatusOr<bool> Ed(absl::string_view pk, absl::string_view msg, absl::string_view sig) {
  std::vector<uint8_t> p = Bytes(pk), m = Bytes(msg), s = Bytes(sig);
  return Ed25519Verify(std::span<const uint8_t, 32>(p.data(), 32), m,
                       std::span<const uint8_t, 64>(s.data(), 64));
}

TEST(Ed25519Test, Rfc8032ValidAndTampered) {
  EXPECT_EQ(Ed(kRfc1Pk, "", kRfc1Sig), absl::StatusOr<bool>(true));
  EXPECT_EQ(Ed(kRfc2Pk, "72", kRfc2Sig), absl::StatusOr<bool>(true));
  EXPECT_EQ(Ed(kRfc2Pk, "73", kRfc2Sig), absl::StatusOr<bool>(false));  // message changed
  EXPECT_EQ(Ed(kRfc1Pk, "72", kRfc2Sig), absl::StatusOr<bool>(false));  // another key
  std::string sig = kRfc1Sig;
  sig[0] = 'f';  // R changed
  EXPECT_EQ(Ed(kRfc1Pk, "", sig), absl::StatusOr<bool>(false));
}

TEST(Ed25519Test, KeyThatIsNotAPointIsAnError) {
  // y = 2: (y^2 - 1) / (d y^2 + 1) is not a square mod 2^255 - 19.
  absl::StatusOr<bool> r =
      Ed("0200000000000000000000000000000000000000000000000000000000000000", "", kRfc1Sig);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("public key"));
  // y = 1 (the identity) decodes: a result, not an error.
  EXPECT_TRUE(
      Ed("0100000000000000000000000000000000000000000000000000000000000000", "", kRfc1Sig).ok());
}

TEST(Ed25519Test, WeakKeysVerifyAsEd25519DalekVerifyDoes) {
  // ed25519-dalek's `verify` (not verify_strict) accepts the identity key A: [s]B - [k]A = B
  // for s = 1, whatever the message, so R = B (58 66 .. 66) with s = 1 verifies. The sign bit of
  // x = 0 is ignored by the decompression (-0 = 0).
  constexpr char kSig[] =
      "5866666666666666666666666666666666666666666666666666666666666666"
      "0100000000000000000000000000000000000000000000000000000000000000";
  EXPECT_EQ(Ed("0100000000000000000000000000000000000000000000000000000000000000", "61", kSig),
            absl::StatusOr<bool>(true));
  EXPECT_EQ(Ed("0100000000000000000000000000000000000000000000000000000000000080", "61", kSig),
            absl::StatusOr<bool>(true));
  // s >= L is refused (dalek's check_scalar): s = L + 1.
  constexpr char kHighS[] =
      "5866666666666666666666666666666666666666666666666666666666666666"
      "eed3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010";
  EXPECT_EQ(Ed("0100000000000000000000000000000000000000000000000000000000000000", "61", kHighS),
            absl::StatusOr<bool>(false));
}

// secp256k1 key, Keccak-256("flamefleet ecdsa test") and a low-s signature of it.
constexpr char kEcX[] = "bb50e2d89a4ed70663d080659fe0ad4b9bc3e06c17a227433966cb59ceee020d";
constexpr char kEcY[] = "ecddbf6e00192011648d13b1c00af770c0c1bb609d4d3a5c98a43772e0e18ef4";
constexpr char kEcDigest[] = "9523a1afa975565e18a0d25c4c61e738be1308cdbe59be28a3bb95857547352a";
constexpr char kEcR[] = "c639b94346f6758aef5bcd5c9967047f41816d1991f0d1d88b4e40415c351e48";
constexpr char kEcS[] = "5c2e01722eb4f5feba2771ccad11646785f96000ccb71799c1edd98185869390";
constexpr char kEcHighS[] = "a3d1fe8dd14b0a0145d88e3352ee9b9734b57ce5e29188a1fde4850b4aafadb1";

absl::StatusOr<bool> Ec(absl::string_view x, absl::string_view y, absl::string_view d,
                        absl::string_view r, absl::string_view s) {
  std::vector<uint8_t> bx = Bytes(x), by = Bytes(y), bd = Bytes(d), br = Bytes(r), bs = Bytes(s);
  return Secp256k1VerifyPrehash(
      std::span<const uint8_t, 32>(bx.data(), 32), std::span<const uint8_t, 32>(by.data(), 32),
      std::span<const uint8_t, 32>(bd.data(), 32), std::span<const uint8_t, 32>(br.data(), 32),
      std::span<const uint8_t, 32>(bs.data(), 32));
}

TEST(Secp256k1Test, ValidInvalidHighS) {
  EXPECT_EQ(Ec(kEcX, kEcY, kEcDigest, kEcR, kEcS), absl::StatusOr<bool>(true));
  std::string d = kEcDigest;
  d[63] = '0';
  EXPECT_EQ(Ec(kEcX, kEcY, d, kEcR, kEcS), absl::StatusOr<bool>(false));
  // The same signature with s replaced by n - s: valid mathematically, refused as high-s.
  EXPECT_EQ(Ec(kEcX, kEcY, kEcDigest, kEcR, kEcHighS), absl::StatusOr<bool>(false));
  // r = 0 is no scalar.
  EXPECT_EQ(Ec(kEcX, kEcY, kEcDigest, std::string(64, '0'), kEcS), absl::StatusOr<bool>(false));
  // A y that is not on the curve for x is an error (the key does not decode).
  std::string y = kEcY;
  y[63] = '5';
  EXPECT_FALSE(Ec(kEcX, y, kEcDigest, kEcR, kEcS).ok());
}

// ---- the handlers

// A VM state: the stack (position 0 = the event id) and written memory.
struct FakeVm {
  std::vector<Felt> stack;
  std::map<uint32_t, Felt> memory;

  // Writes `bytes` packed 4 per element from `addr`, and zero-fills the rest of the last word
  // (a program stores whole words).
  void StoreBytes(uint32_t addr, const std::vector<uint8_t>& bytes) {
    const size_t felts = (bytes.size() + 3) / 4, padded = (felts + 3) / 4 * 4;
    for (size_t i = 0; i < padded; ++i) {
      uint64_t v = 0;
      for (size_t b = 0; b < 4 && 4 * i + b < bytes.size(); ++b)
        v |= uint64_t{bytes[4 * i + b]} << (8 * b);
      memory[addr + static_cast<uint32_t>(i)] = Felt(v);
    }
  }

  absl::StatusOr<PrecompileAnswer> Run(Precompile which, uint64_t id = 42) const {
    return RunPrecompile(
        which, id,
        [this](int i) { return i < static_cast<int>(stack.size()) ? stack[i] : Felt(0); },
        [this](uint32_t a) -> std::optional<Felt> {
          auto it = memory.find(a);
          if (it == memory.end()) return std::nullopt;
          return it->second;
        },
        Poseidon2Hasher::Get());
  }
};

std::vector<Felt> LeLimbs(const std::vector<uint8_t>& digest) {
  std::vector<Felt> out;
  for (size_t i = 0; i < digest.size(); i += 4) {
    out.push_back(Felt(uint64_t{digest[i]} | uint64_t{digest[i + 1]} << 8 |
                       uint64_t{digest[i + 2]} << 16 | uint64_t{digest[i + 3]} << 24));
  }
  return out;
}

TEST(PrecompileHandlerTest, Keccak256ReadsPackedBytesAndPushesLittleEndianLimbs) {
  FakeVm vm;
  vm.StoreBytes(64, Bytes("c1ecfdfc"));
  vm.stack = {Felt(99), Felt(64), Felt(4)};
  absl::StatusOr<PrecompileAnswer> a = vm.Run(Precompile::kKeccak256, 99);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->advice, ElementsAreArray(LeLimbs(Bytes(
                             "b149e766d7612eaf7d55f74e1a4fdd63709a8115b14f61fcd22aa4abc8b8e122"))));
  ASSERT_TRUE(a->request.has_value());
  EXPECT_EQ(a->request->event_id, 99u);
  EXPECT_EQ(a->request->calldata, Bytes("c1ecfdfc"));
}

TEST(PrecompileHandlerTest, Sha512OfThreeBytesWithZeroPadding) {
  FakeVm vm;
  vm.StoreBytes(0, {'a', 'b', 'c'});
  vm.stack = {Felt(1), Felt(0), Felt(3)};
  absl::StatusOr<PrecompileAnswer> a = vm.Run(Precompile::kSha512);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->advice, ElementsAreArray(LeLimbs(Bytes(
                             "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                             "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"))));
}

TEST(PrecompileHandlerTest, HashErrors) {
  FakeVm vm;
  vm.StoreBytes(0, {'a', 'b', 'c'});
  // Non-zero padding: 'abc' claimed as 2 bytes.
  vm.stack = {Felt(1), Felt(0), Felt(2)};
  absl::StatusOr<PrecompileAnswer> a = vm.Run(Precompile::kKeccak256);
  EXPECT_THAT(a.status().message(), HasSubstr("non-zero padding byte 0x63 at byte position 2"));
  // Unaligned pointer.
  vm.stack = {Felt(1), Felt(2), Felt(3)};
  EXPECT_THAT(vm.Run(Precompile::kSha512).status().message(), HasSubstr("not word-aligned"));
  // A word never written.
  vm.stack = {Felt(1), Felt(0), Felt(20)};
  EXPECT_THAT(vm.Run(Precompile::kKeccak256).status().message(),
              HasSubstr("failed to read memory at address 4"));
  // A limb that is not a u32.
  vm.memory[0] = Felt(uint64_t{1} << 32);
  vm.stack = {Felt(1), Felt(0), Felt(3)};
  EXPECT_THAT(vm.Run(Precompile::kKeccak256).status().message(), HasSubstr("exceeds u32::MAX"));
  // Over the length limit: refused before reading.
  vm.stack = {Felt(1), Felt(0), Felt(kMaxPrecompileHashBytes + 1)};
  EXPECT_THAT(vm.Run(Precompile::kSha512).status().message(),
              HasSubstr("input length 1048577 bytes exceeds maximum of 1048576 bytes"));
  // Zero bytes read nothing.
  vm.stack = {Felt(1), Felt(400), Felt(0)};
  absl::StatusOr<PrecompileAnswer> empty = vm.Run(Precompile::kKeccak256);
  ASSERT_TRUE(empty.ok());
  EXPECT_THAT(empty->advice,
              ElementsAreArray(LeLimbs(
                  Bytes("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"))));
}

// The key as the handler reads it: qx then qy, each as 8 u32 limbs, least significant first.
std::vector<uint8_t> EcKeyBytes(absl::string_view x, absl::string_view y) {
  std::vector<uint8_t> bx = Bytes(x), by = Bytes(y), out;
  out.insert(out.end(), bx.rbegin(), bx.rend());
  out.insert(out.end(), by.rbegin(), by.rend());
  return out;
}

TEST(PrecompileHandlerTest, EcdsaValidInvalidAndMalformed) {
  FakeVm vm;
  vm.StoreBytes(0, EcKeyBytes(kEcX, kEcY));  // 16 felts
  vm.StoreBytes(16, Bytes(kEcDigest));       // 8 felts
  std::vector<uint8_t> sig = Bytes(kEcR);
  std::vector<uint8_t> s = Bytes(kEcS);
  sig.insert(sig.end(), s.begin(), s.end());
  sig.push_back(1);        // v
  vm.StoreBytes(24, sig);  // 17 felts
  vm.stack = {Felt(7), Felt(0), Felt(16), Felt(24)};
  absl::StatusOr<PrecompileAnswer> a = vm.Run(Precompile::kEcdsaK256Keccak, 7);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->advice, ElementsAreArray({Felt(1)}));
  ASSERT_TRUE(a->request.has_value());
  EXPECT_EQ(a->request->calldata.size(), 64u + 32u + 65u);

  vm.memory[16] = Felt(vm.memory[16].value() ^ 1);  // digest changed: a result of 0
  a = vm.Run(Precompile::kEcdsaK256Keccak);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->advice, ElementsAreArray({Felt(0)}));

  vm.memory[24 + 16] = Felt(4);  // recovery id 4: the signature does not deserialize
  EXPECT_THAT(vm.Run(Precompile::kEcdsaK256Keccak).status().message(),
              HasSubstr("Invalid recovery ID"));
  vm.memory[24 + 16] = Felt(0x100);  // a padding byte of the signature's last felt
  EXPECT_THAT(vm.Run(Precompile::kEcdsaK256Keccak).status().message(), HasSubstr("padding"));

  // A key off the curve fails before the signature and digest are read (as upstream).
  FakeVm off_curve;
  off_curve.StoreBytes(0, EcKeyBytes(kEcX, kEcX));
  off_curve.stack = {Felt(7), Felt(0), Felt(800), Felt(900)};
  EXPECT_THAT(off_curve.Run(Precompile::kEcdsaK256Keccak).status().message(),
              HasSubstr("failed to deserialize public key"));
}

TEST(PrecompileHandlerTest, EddsaValidTamperedAndNonCanonicalMessage) {
  // RFC 8032 TEST 1's key signing the 32 bytes 01..20 (four canonical 8-byte felts).
  constexpr char kMsg[] = "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20";
  constexpr char kSig[] =
      "8d917876339a83dc45d1796e557c7baf8bff5e88ab000e166136fa8a32e8318c6e0c05d03a29f317ff7114c7b128"
      "ea9a80d57142b818dc0f515f950afef5660b";
  ASSERT_EQ(Ed(kRfc1Pk, kMsg, kSig), absl::StatusOr<bool>(true));
  FakeVm vm;
  vm.StoreBytes(0, Bytes(kRfc1Pk));
  vm.StoreBytes(8, Bytes(kMsg));
  vm.StoreBytes(16, Bytes(kSig));
  vm.stack = {Felt(5), Felt(0), Felt(8), Felt(16)};
  absl::StatusOr<PrecompileAnswer> a = vm.Run(Precompile::kEddsaEd25519, 5);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->advice, ElementsAreArray({Felt(1)}));
  EXPECT_EQ(a->request->calldata.size(), 128u);
  vm.memory[16] = Felt(vm.memory[16].value() ^ 0x100);  // R changed
  EXPECT_THAT(vm.Run(Precompile::kEddsaEd25519)->advice, ElementsAreArray({Felt(0)}));

  // A message felt >= p is no Word: 0 without verifying.
  FakeVm bad = vm;
  bad.memory[8] = Felt(0xFFFFFFFF);
  bad.memory[9] = Felt(0xFFFFFFFF);
  EXPECT_THAT(bad.Run(Precompile::kEddsaEd25519)->advice, ElementsAreArray({Felt(0)}));

  // A key that is not a point: an error, checked before the message is read.
  FakeVm no_key;
  no_key.StoreBytes(0, Bytes("0200000000000000000000000000000000000000000000000000000000000000"));
  no_key.stack = {Felt(5), Felt(0), Felt(800), Felt(900)};
  EXPECT_THAT(no_key.Run(Precompile::kEddsaEd25519).status().message(),
              HasSubstr("failed to deserialize public key"));
}

// Encrypts `plain` (whole 8-element blocks) as AEAD-Poseidon2 with no associated data, the
// scheme the handler decrypts, laid out as [ciphertext, encrypted padding block, tag].
std::vector<Felt> AeadEncrypt(const std::array<Felt, 4>& key, const std::array<Felt, 4>& nonce,
                              const std::vector<Felt>& plain) {
  const Hasher& h = Poseidon2Hasher::Get();
  HasherState st{};
  for (int i = 0; i < 4; ++i) st[i] = key[i], st[4 + i] = nonce[i];
  h.Permute(st);
  st[8] += Felt(1);
  for (int i = 0; i < 8; ++i) st[i] = Felt(i == 0 ? 1 : 0);
  std::vector<Felt> padded = plain;
  padded.push_back(Felt(1));
  padded.resize(padded.size() + 7, Felt(0));
  std::vector<Felt> out;
  for (size_t b = 0; b < padded.size(); b += 8) {
    h.Permute(st);
    for (int i = 0; i < 8; ++i) {
      st[i] = padded[b + i] + st[i];
      out.push_back(st[i]);
    }
  }
  h.Permute(st);
  for (int i = 0; i < 4; ++i) out.push_back(st[i]);
  return out;
}

TEST(PrecompileHandlerTest, AeadDecryptRoundTripAndBadTag) {
  const std::array<Felt, 4> key{Felt(1), Felt(2), Felt(3), Felt(4)};
  const std::array<Felt, 4> nonce{Felt(5), Felt(6), Felt(7), Felt(8)};
  std::vector<Felt> plain;
  for (uint64_t i = 0; i < 16; ++i) plain.push_back(Felt(100 + i));
  const std::vector<Felt> enc = AeadEncrypt(key, nonce, plain);
  ASSERT_EQ(enc.size(), 16u + 8u + 4u);
  FakeVm vm;
  for (size_t i = 0; i < enc.size(); ++i) vm.memory[1000 + static_cast<uint32_t>(i)] = enc[i];
  // [id, KEY (element 0 on top), NONCE, src, dst, num_blocks]
  vm.stack = {Felt(9),  key[0],   key[1],   key[2],     key[3],     nonce[0],
              nonce[1], nonce[2], nonce[3], Felt(1000), Felt(5000), Felt(2)};
  absl::StatusOr<PrecompileAnswer> a = vm.Run(Precompile::kAeadDecrypt);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->advice, ElementsAreArray(plain));
  EXPECT_FALSE(a->request.has_value());
  vm.memory[1000 + 24] = vm.memory[1000 + 24] + Felt(1);  // tag changed
  EXPECT_THAT(vm.Run(Precompile::kAeadDecrypt).status().message(), HasSubstr("tag"));
  vm.stack[11] = Felt((kMaxAeadPlaintextElements / 8) + 1);
  EXPECT_THAT(vm.Run(Precompile::kAeadDecrypt).status().message(), HasSubstr("size overflow"));
}

}  // namespace
}  // namespace flamefleet::vm

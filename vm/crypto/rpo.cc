#include "vm/crypto/rpo.h"

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#define FF_RPO_AVX2 1
#endif

namespace flamefleet::vm {
namespace {

// First row of the circulant MDS matrix: M[i][j] = kMdsRow[(j - i) mod 12].
constexpr uint64_t kMdsRow[kRpoStateWidth] = {7, 23, 8, 26, 13, 10, 9, 7, 6, 22, 21, 8};

// Round constants of 0xMiden/crypto v0.15.9 miden-crypto/src/hash/rescue/mod.rs
// (the published RPO specification constants); all are canonical.
// clang-format off
constexpr uint64_t kArk1[kRpoNumRounds][kRpoStateWidth] = {
    {
        5789762306288267392ULL, 6522564764413701783ULL, 17809893479458208203ULL, 107145243989736508ULL,
        6388978042437517382ULL, 15844067734406016715ULL, 9975000513555218239ULL, 3344984123768313364ULL,
        9959189626657347191ULL, 12960773468763563665ULL, 9602914297752488475ULL, 16657542370200465908ULL,
    },
    {
        12987190162843096997ULL, 653957632802705281ULL, 4441654670647621225ULL, 4038207883745915761ULL,
        5613464648874830118ULL, 13222989726778338773ULL, 3037761201230264149ULL, 16683759727265180203ULL,
        8337364536491240715ULL, 3227397518293416448ULL, 8110510111539674682ULL, 2872078294163232137ULL,
    },
    {
        18072785500942327487ULL, 6200974112677013481ULL, 17682092219085884187ULL, 10599526828986756440ULL,
        975003873302957338ULL, 8264241093196931281ULL, 10065763900435475170ULL, 2181131744534710197ULL,
        6317303992309418647ULL, 1401440938888741532ULL, 8884468225181997494ULL, 13066900325715521532ULL,
    },
    {
        5674685213610121970ULL, 5759084860419474071ULL, 13943282657648897737ULL, 1352748651966375394ULL,
        17110913224029905221ULL, 1003883795902368422ULL, 4141870621881018291ULL, 8121410972417424656ULL,
        14300518605864919529ULL, 13712227150607670181ULL, 17021852944633065291ULL, 6252096473787587650ULL,
    },
    {
        4887609836208846458ULL, 3027115137917284492ULL, 9595098600469470675ULL, 10528569829048484079ULL,
        7864689113198939815ULL, 17533723827845969040ULL, 5781638039037710951ULL, 17024078752430719006ULL,
        109659393484013511ULL, 7158933660534805869ULL, 2955076958026921730ULL, 7433723648458773977ULL,
    },
    {
        16308865189192447297ULL, 11977192855656444890ULL, 12532242556065780287ULL, 14594890931430968898ULL,
        7291784239689209784ULL, 5514718540551361949ULL, 10025733853830934803ULL, 7293794580341021693ULL,
        6728552937464861756ULL, 6332385040983343262ULL, 13277683694236792804ULL, 2600778905124452676ULL,
    },
    {
        7123075680859040534ULL, 1034205548717903090ULL, 7717824418247931797ULL, 3019070937878604058ULL,
        11403792746066867460ULL, 10280580802233112374ULL, 337153209462421218ULL, 13333398568519923717ULL,
        3596153696935337464ULL, 8104208463525993784ULL, 14345062289456085693ULL, 17036731477169661256ULL,
    },
};
constexpr uint64_t kArk2[kRpoNumRounds][kRpoStateWidth] = {
    {
        6077062762357204287ULL, 15277620170502011191ULL, 5358738125714196705ULL, 14233283787297595718ULL,
        13792579614346651365ULL, 11614812331536767105ULL, 14871063686742261166ULL, 10148237148793043499ULL,
        4457428952329675767ULL, 15590786458219172475ULL, 10063319113072092615ULL, 14200078843431360086ULL,
    },
    {
        6202948458916099932ULL, 17690140365333231091ULL, 3595001575307484651ULL, 373995945117666487ULL,
        1235734395091296013ULL, 14172757457833931602ULL, 707573103686350224ULL, 15453217512188187135ULL,
        219777875004506018ULL, 17876696346199469008ULL, 17731621626449383378ULL, 2897136237748376248ULL,
    },
    {
        8023374565629191455ULL, 15013690343205953430ULL, 4485500052507912973ULL, 12489737547229155153ULL,
        9500452585969030576ULL, 2054001340201038870ULL, 12420704059284934186ULL, 355990932618543755ULL,
        9071225051243523860ULL, 12766199826003448536ULL, 9045979173463556963ULL, 12934431667190679898ULL,
    },
    {
        18389244934624494276ULL, 16731736864863925227ULL, 4440209734760478192ULL, 17208448209698888938ULL,
        8739495587021565984ULL, 17000774922218161967ULL, 13533282547195532087ULL, 525402848358706231ULL,
        16987541523062161972ULL, 5466806524462797102ULL, 14512769585918244983ULL, 10973956031244051118ULL,
    },
    {
        6982293561042362913ULL, 14065426295947720331ULL, 16451845770444974180ULL, 7139138592091306727ULL,
        9012006439959783127ULL, 14619614108529063361ULL, 1394813199588124371ULL, 4635111139507788575ULL,
        16217473952264203365ULL, 10782018226466330683ULL, 6844229992533662050ULL, 7446486531695178711ULL,
    },
    {
        3736792340494631448ULL, 577852220195055341ULL, 6689998335515779805ULL, 13886063479078013492ULL,
        14358505101923202168ULL, 7744142531772274164ULL, 16135070735728404443ULL, 12290902521256031137ULL,
        12059913662657709804ULL, 16456018495793751911ULL, 4571485474751953524ULL, 17200392109565783176ULL,
    },
    {
        17130398059294018733ULL, 519782857322261988ULL, 9625384390925085478ULL, 1664893052631119222ULL,
        7629576092524553570ULL, 3485239601103661425ULL, 9755891797164033838ULL, 15218148195153269027ULL,
        16460604813734957368ULL, 9643968136937729763ULL, 3611348709641382851ULL, 18256379591337759196ULL,
    },
};
// clang-format on

// state <- M * state. Each element is split into 32-bit halves so that the 12
// products of a row accumulate without overflow in a u64 (12 * 26 * 2^32 <
// 2^41); the two sums are joined into one < 2^74 value and reduced once.
inline void ApplyMds(RpoState& state) {
  uint64_t lo[kRpoStateWidth], hi[kRpoStateWidth];
  for (int j = 0; j < kRpoStateWidth; ++j) {
    lo[j] = state[j].value() & 0xFFFFFFFFULL;
    hi[j] = state[j].value() >> 32;
  }
  for (int i = 0; i < kRpoStateWidth; ++i) {
    uint64_t sum_lo = 0, sum_hi = 0;
    for (int j = 0; j < kRpoStateWidth; ++j) {
      const uint64_t m = kMdsRow[(j - i + kRpoStateWidth) % kRpoStateWidth];
      sum_lo += m * lo[j];
      sum_hi += m * hi[j];
    }
    state[i] = Felt::Reduce128((static_cast<unsigned __int128>(sum_hi) << 32) + sum_lo);
  }
}

inline void AddConstants(RpoState& state, const uint64_t (&ark)[kRpoStateWidth]) {
  for (int i = 0; i < kRpoStateWidth; ++i) state[i] += Felt(ark[i]);
}

// Field multiplication on raw u64 representatives that need not be canonical
// (any value < 2^64 congruent mod p), with a branch-free reduction of the
// 128-bit product: in the S-boxes the carries are data-dependent coin flips, so
// branches would mispredict half the time. The result is < 2^64 and congruent
// to a * b; Canonical() brings it below p.
inline uint64_t MulNc(uint64_t a, uint64_t b) {
  const unsigned __int128 x = static_cast<unsigned __int128>(a) * b;
  const uint64_t lo = static_cast<uint64_t>(x), hi = static_cast<uint64_t>(x >> 64);
  uint64_t t0;
  const uint64_t borrow = __builtin_sub_overflow(lo, hi >> 32, &t0);  // 2^96 = -1
  t0 -= Felt::kEpsilon & (0 - borrow);
  uint64_t r;
  const uint64_t carry =  // 2^64 = 2^32 - 1
      __builtin_add_overflow(t0, (hi & Felt::kEpsilon) * Felt::kEpsilon, &r);
  return r + (Felt::kEpsilon & (0 - carry));
}
inline Felt Canonical(uint64_t r) { return Felt(r >= Felt::kModulus ? r - Felt::kModulus : r); }

using RawState = std::array<uint64_t, kRpoStateWidth>;

inline void Sbox(RpoState& state) {
  for (Felt& x : state) {
    uint64_t x2 = MulNc(x.value(), x.value());
    uint64_t x4 = MulNc(x2, x2);
    x = Canonical(MulNc(x4, MulNc(x2, x.value())));
  }
}

// The whole state goes through each step of the chain together: the 12
// independent multiplications of a step overlap in the pipeline instead of
// waiting on one another.
inline void SquareTimes(RawState& s, int n) {
  for (int k = 0; k < n; ++k) {
    for (uint64_t& x : s) x = MulNc(x, x);
  }
}
inline void MulInto(RawState& acc, const RawState& b) {
  for (int i = 0; i < kRpoStateWidth; ++i) acc[i] = MulNc(acc[i], b[i]);
}

#if FF_RPO_AVX2
// AVX2 path (chosen at run time; the scalar code below is the fallback and the
// reference): the 12 lanes are three 4-lane vectors, and each MulNc is done
// with 32x32 -> 64 multiplies. MulNcV has the value semantics of MulNc (result
// < 2^64, congruent), and every step ends canonical, so the outputs are
// bit-identical to the scalar path. About 2x the scalar throughput.
#define FF_AVX2 __attribute__((target("avx2"), always_inline)) inline
struct V3 {
  __m256i v[3];
};
// Reduces hi * 2^64 + lo to a value < 2^64 congruent mod p, as MulNc does.
// Unsigned compares are signed compares on values xored with 2^63; the
// subtraction and addition are done on the xored ("shifted") values directly,
// since xoring the top bit commutes with adding mod 2^64.
FF_AVX2 __m256i ReduceV(__m256i lo, __m256i hi) {
  const __m256i mask32 = _mm256_set1_epi64x(0xFFFFFFFFLL);
  const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(1ULL << 63));
  // t0 = lo - (hi >> 32) (2^96 = -1); on borrow subtract eps.
  const __m256i hi_hi = _mm256_srli_epi64(hi, 32);
  const __m256i lo_s = _mm256_xor_si256(lo, sign);
  const __m256i borrow = _mm256_cmpgt_epi64(_mm256_or_si256(hi_hi, sign), lo_s);
  const __m256i t0_s =
      _mm256_sub_epi64(_mm256_sub_epi64(lo_s, hi_hi), _mm256_and_si256(borrow, mask32));
  // r = t0 + (hi & eps) * eps (2^64 = eps); on carry add eps.
  const __m256i hi_lo = _mm256_and_si256(hi, mask32);
  const __m256i t1 = _mm256_sub_epi64(_mm256_slli_epi64(hi_lo, 32), hi_lo);
  const __m256i r_s = _mm256_add_epi64(t0_s, t1);
  const __m256i carry = _mm256_cmpgt_epi64(t0_s, r_s);
  return _mm256_add_epi64(_mm256_xor_si256(r_s, sign), _mm256_and_si256(carry, mask32));
}
FF_AVX2 __m256i MulNcV(__m256i a, __m256i b) {
  const __m256i mask32 = _mm256_set1_epi64x(0xFFFFFFFFLL);
  const __m256i a_hi = _mm256_srli_epi64(a, 32), b_hi = _mm256_srli_epi64(b, 32);
  const __m256i ll = _mm256_mul_epu32(a, b);
  const __m256i lh = _mm256_mul_epu32(a, b_hi);
  const __m256i hl = _mm256_mul_epu32(a_hi, b);
  const __m256i hh = _mm256_mul_epu32(a_hi, b_hi);
  const __m256i t = _mm256_add_epi64(hl, _mm256_srli_epi64(ll, 32));
  const __m256i u = _mm256_add_epi64(lh, _mm256_and_si256(t, mask32));
  const __m256i lo = _mm256_or_si256(_mm256_slli_epi64(u, 32), _mm256_and_si256(ll, mask32));
  const __m256i hi =
      _mm256_add_epi64(hh, _mm256_add_epi64(_mm256_srli_epi64(t, 32), _mm256_srli_epi64(u, 32)));
  return ReduceV(lo, hi);
}
// MulNcV(a, a) with one cross product fewer.
FF_AVX2 __m256i SqrNcV(__m256i a) {
  const __m256i mask32 = _mm256_set1_epi64x(0xFFFFFFFFLL);
  const __m256i a_hi = _mm256_srli_epi64(a, 32);
  const __m256i ll = _mm256_mul_epu32(a, a);
  const __m256i lh = _mm256_mul_epu32(a, a_hi);
  const __m256i hh = _mm256_mul_epu32(a_hi, a_hi);
  const __m256i t = _mm256_add_epi64(lh, _mm256_srli_epi64(ll, 32));
  const __m256i u = _mm256_add_epi64(lh, _mm256_and_si256(t, mask32));
  const __m256i lo = _mm256_or_si256(_mm256_slli_epi64(u, 32), _mm256_and_si256(ll, mask32));
  const __m256i hi =
      _mm256_add_epi64(hh, _mm256_add_epi64(_mm256_srli_epi64(t, 32), _mm256_srli_epi64(u, 32)));
  return ReduceV(lo, hi);
}
FF_AVX2 void SqV(V3& s, int n) {
  for (int k = 0; k < n; ++k) {
    s.v[0] = SqrNcV(s.v[0]);
    s.v[1] = SqrNcV(s.v[1]);
    s.v[2] = SqrNcV(s.v[2]);
  }
}
FF_AVX2 void MulV(V3& acc, const V3& b) {
  acc.v[0] = MulNcV(acc.v[0], b.v[0]);
  acc.v[1] = MulNcV(acc.v[1], b.v[1]);
  acc.v[2] = MulNcV(acc.v[2], b.v[2]);
}

// The whole permutation on three 4-lane vectors. MDS: for each input j,
// out += broadcast(x_j) * column j, on the 32-bit halves (products < 2^37,
// sums < 2^41), then one reduction per output, as in ApplyMds.
struct MdsCols {
  uint64_t c[kRpoStateWidth][kRpoStateWidth];  // c[j][i] = M[i][j]
};
constexpr MdsCols MakeMdsCols() {
  MdsCols m{};
  for (int j = 0; j < kRpoStateWidth; ++j)
    for (int i = 0; i < kRpoStateWidth; ++i)
      m.c[j][i] = kMdsRow[(j - i + kRpoStateWidth) % kRpoStateWidth];
  return m;
}
alignas(32) constexpr MdsCols kMdsCols = MakeMdsCols();

FF_AVX2 __m256i CanonicalV(__m256i r) {
  const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(1ULL << 63));
  const __m256i pm1s =
      _mm256_set1_epi64x(static_cast<long long>((Felt::kModulus - 1) ^ (1ULL << 63)));
  const __m256i ge = _mm256_cmpgt_epi64(_mm256_xor_si256(r, sign), pm1s);
  return _mm256_sub_epi64(
      r, _mm256_and_si256(ge, _mm256_set1_epi64x(static_cast<long long>(Felt::kModulus))));
}
// a + b for canonical a, b (as Felt::operator+).
FF_AVX2 __m256i AddV(__m256i a, __m256i b) {
  const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(1ULL << 63));
  const __m256i mask32 = _mm256_set1_epi64x(0xFFFFFFFFLL);
  const __m256i s = _mm256_add_epi64(a, b);
  const __m256i wrap = _mm256_cmpgt_epi64(_mm256_xor_si256(a, sign), _mm256_xor_si256(s, sign));
  return CanonicalV(_mm256_add_epi64(s, _mm256_and_si256(wrap, mask32)));
}
FF_AVX2 void MdsV(V3& st) {
  const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(1ULL << 63));
  const __m256i mask32 = _mm256_set1_epi64x(0xFFFFFFFFLL);
  alignas(32) uint64_t x[kRpoStateWidth];
  for (int k = 0; k < 3; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(x + 4 * k), st.v[k]);
  __m256i slo[3], shi[3];
  for (int k = 0; k < 3; ++k) slo[k] = shi[k] = _mm256_setzero_si256();
  for (int j = 0; j < kRpoStateWidth; ++j) {
    const __m256i xl = _mm256_set1_epi64x(static_cast<long long>(x[j]));
    const __m256i xh = _mm256_srli_epi64(xl, 32);
    for (int k = 0; k < 3; ++k) {
      const __m256i c = _mm256_load_si256(reinterpret_cast<const __m256i*>(&kMdsCols.c[j][4 * k]));
      slo[k] = _mm256_add_epi64(slo[k], _mm256_mul_epu32(xl, c));
      shi[k] = _mm256_add_epi64(shi[k], _mm256_mul_epu32(xh, c));
    }
  }
  for (int k = 0; k < 3; ++k) {
    // x = shi * 2^32 + slo < 2^74: lo64 and hi (< 2^10); 2^64 = eps.
    const __m256i lo = _mm256_add_epi64(_mm256_slli_epi64(shi[k], 32), slo[k]);
    const __m256i c1 =
        _mm256_cmpgt_epi64(_mm256_xor_si256(slo[k], sign), _mm256_xor_si256(lo, sign));
    const __m256i hi = _mm256_sub_epi64(_mm256_srli_epi64(shi[k], 32), c1);
    const __m256i t1 = _mm256_sub_epi64(_mm256_slli_epi64(hi, 32), hi);
    const __m256i r = _mm256_add_epi64(lo, t1);
    const __m256i c2 = _mm256_cmpgt_epi64(_mm256_xor_si256(lo, sign), _mm256_xor_si256(r, sign));
    st.v[k] = CanonicalV(_mm256_add_epi64(r, _mm256_and_si256(c2, mask32)));
  }
}
FF_AVX2 void AddConstV(V3& st, const uint64_t (&ark)[kRpoStateWidth]) {
  for (int k = 0; k < 3; ++k)
    st.v[k] = AddV(st.v[k], _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ark + 4 * k)));
}
FF_AVX2 void SboxV(V3& st) {
  for (int k = 0; k < 3; ++k) {
    const __m256i x = st.v[k];
    const __m256i x2 = MulNcV(x, x);
    const __m256i x4 = MulNcV(x2, x2);
    st.v[k] = CanonicalV(MulNcV(x4, MulNcV(x2, x)));
  }
}
FF_AVX2 void InvSboxV(V3& x) {
  V3 t1 = x;
  SqV(t1, 1);
  V3 t2 = t1;
  SqV(t2, 1);
  V3 t3 = t2;
  SqV(t3, 3);
  MulV(t3, t2);
  V3 t4 = t3;
  SqV(t4, 6);
  MulV(t4, t3);
  V3 t5 = t4;
  SqV(t5, 12);
  MulV(t5, t4);
  V3 t6 = t5;
  SqV(t6, 6);
  MulV(t6, t3);
  V3 a = t6;
  SqV(a, 31);
  MulV(a, t6);
  SqV(a, 1);
  MulV(a, t6);
  SqV(a, 2);
  MulV(a, t1);
  MulV(a, t2);
  MulV(a, x);
  for (int k = 0; k < 3; ++k) x.v[k] = CanonicalV(a.v[k]);
}
__attribute__((target("avx2"))) void InverseSboxAvx2(RpoState& state) {
  V3 st;
  for (int k = 0; k < 3; ++k)
    st.v[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state.data() + 4 * k));
  InvSboxV(st);
  for (int k = 0; k < 3; ++k)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(state.data() + 4 * k), st.v[k]);
}
__attribute__((target("avx2"))) void PermuteAvx2(RpoState& state) {
  V3 st;
  for (int k = 0; k < 3; ++k)
    st.v[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(state.data() + 4 * k));
  for (int r = 0; r < kRpoNumRounds; ++r) {
    MdsV(st);
    AddConstV(st, kArk1[r]);
    SboxV(st);
    MdsV(st);
    AddConstV(st, kArk2[r]);
    InvSboxV(st);
  }
  for (int k = 0; k < 3; ++k)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(state.data() + 4 * k), st.v[k]);
}
bool CpuHasAvx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}
// False until this initializer has run (the scalar path is then used); tests may clear it.
bool use_avx2 = CpuHasAvx2();
#endif

// x -> x^10540996611094048183 for every element, with 72 multiplications each.
// In binary the exponent is
// 1001001001001001001001001001000110110110110110110110110110110111.
inline void InverseSbox(RpoState& state) {
#if FF_RPO_AVX2
  if (use_avx2) {
    InverseSboxAvx2(state);
    return;
  }
#endif
  RawState x;
  for (int i = 0; i < kRpoStateWidth; ++i) x[i] = state[i].value();
  RawState t1 = x;
  SquareTimes(t1, 1);  // x^0b10
  RawState t2 = t1;
  SquareTimes(t2, 1);  // x^0b100
  RawState t3 = t2;
  SquareTimes(t3, 3);
  MulInto(t3, t2);  // x^0b100100
  RawState t4 = t3;
  SquareTimes(t4, 6);
  MulInto(t4, t3);  // x^0b100100100100
  RawState t5 = t4;
  SquareTimes(t5, 12);
  MulInto(t5, t4);  // x^0b(100)x8
  RawState t6 = t5;
  SquareTimes(t6, 6);
  MulInto(t6, t3);  // x^0b(100)x10
  RawState a = t6;
  SquareTimes(a, 31);
  MulInto(a, t6);  // t6 shifted left by 31 bits, plus t6
  SquareTimes(a, 1);
  MulInto(a, t6);
  SquareTimes(a, 2);
  MulInto(a, t1);
  MulInto(a, t2);
  MulInto(a, x);  // the trailing ...111
  for (int i = 0; i < kRpoStateWidth; ++i) state[i] = Canonical(a[i]);
}

}  // namespace

bool UseRpoAvx2ForTest(bool enable) {
#if FF_RPO_AVX2
  use_avx2 = enable && CpuHasAvx2();
  return use_avx2;
#else
  (void)enable;
  return false;
#endif
}

Felt RpoInverseSboxForTest(Felt x) {
  RpoState state;
  state.fill(x);
  InverseSbox(state);
  return state[0];
}

void Permute(RpoState& state) {
#if FF_RPO_AVX2
  if (use_avx2) {
    PermuteAvx2(state);
    return;
  }
#endif
  for (int r = 0; r < kRpoNumRounds; ++r) {
    ApplyMds(state);
    AddConstants(state, kArk1[r]);
    Sbox(state);
    ApplyMds(state);
    AddConstants(state, kArk2[r]);
    InverseSbox(state);
  }
}

Word HashElements(std::span<const Felt> elements) {
  RpoState state{};
  state[0] = Felt(elements.size() % 8);
  size_t i = 0;
  for (Felt e : elements) {
    state[4 + i] = e;
    if (++i == 8) {
      Permute(state);
      i = 0;
    }
  }
  if (i > 0) {
    for (; i < 8; ++i) state[4 + i] = Felt(0);
    Permute(state);
  }
  return Word{state[4], state[5], state[6], state[7]};
}

Word MergeInDomain(const Word& a, const Word& b, Felt domain) {
  RpoState state{};
  state[1] = domain;
  for (int i = 0; i < 4; ++i) {
    state[4 + i] = a[i];
    state[8 + i] = b[i];
  }
  Permute(state);
  return Word{state[4], state[5], state[6], state[7]};
}

Word Merge(const Word& a, const Word& b) { return MergeInDomain(a, b, Felt(0)); }

const RpoHasher& RpoHasher::Get() {
  // Intentionally never destroyed (no exit-time destructor).
  static const RpoHasher* const kInstance = new RpoHasher;
  return *kInstance;
}

void RpoHasher::Permute(HasherState& state) const { vm::Permute(state); }

Word RpoHasher::HashElements(std::span<const Felt> elements) const {
  return vm::HashElements(elements);
}

Word RpoHasher::Merge(const Word& a, const Word& b) const { return vm::Merge(a, b); }

Word RpoHasher::MergeInDomain(const Word& a, const Word& b, Felt domain) const {
  return vm::MergeInDomain(a, b, domain);
}

}  // namespace flamefleet::vm

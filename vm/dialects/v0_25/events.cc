// The v0.25 system events (core/src/events/sys_events.rs at v0.25.7).
// Each id is the felt EventId::from_name("sys::<name>"): the first 8 bytes of BLAKE3 of the
// name as a little-endian u64, reduced mod p (checked by a test that recomputes them).
// The handlers read their operands from s1 (the event id is at s0 while EMIT runs), words with
// element 0 nearest the top (processor/src/fast/basic_block/sys_event_handlers.rs).
//
// The library events are those of the v0.25.7 core library that `miden run` answers through
// CoreLibrary::handlers() (crates/lib/core/src/handlers/*.rs); their ids are
// EventId::from_name of the full names (checked by a test). The precompiles (keccak256,
// sha512, ECDSA, EdDSA, AEAD decrypt) are computed by vm/executor/precompiles.h; the debug
// module's prints (miden::core::debug::print_*) write with vm/executor/debug_print.h when
// ExecutionOptions::debug_print is set and do nothing otherwise.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "absl/status/statusor.h"
#include "vm/dialects/v0_25/v0_25.h"
#include "vm/executor/system_events.h"

namespace flamefleet::vm::v0_25 {
namespace {

using H = SystemEventHandler;

// Sorted by id (checked below). Names are the `adv.<name>` spellings; the upstream event name
// is "sys::" + the handler's name in the comment.
constexpr SystemEventRow kEvents[] = {
    {1503707361178382932ULL, "", H::kU32Clz},                           // u32_clz
    {1741586542981559489ULL, "push_mapvaln.8", H::kMapValueToStackN8},  // map_value_to_stack_n_8
    {3443305460233942990ULL, "push_mapvaln.4", H::kMapValueToStackN4},  // map_value_to_stack_n_4
    {3470274154276391308ULL, "push_mapval_count", H::kMapValueCountToStack},
    {5642583036089175977ULL, "has_mapkey", H::kHasMapKey},
    {5768534446586058686ULL, "insert_mem", H::kMemToMap},        // mem_to_map
    {5988159172915333521ULL, "insert_hdword", H::kHdwordToMap},  // hdword_to_map
    {6143777601072385586ULL, "insert_hdword_d", H::kHdwordToMapWithDomain},
    {6190830263511605775ULL, "insert_hperm", H::kHpermToMap},         // hperm_to_map
    {6773574803673468616ULL, "", H::kU32Cto},                         // u32_cto
    {6873007751276594108ULL, "push_mtnode", H::kMerkleNodeToStack},   // merkle_node_to_stack
    {7243907139105902342ULL, "", H::kMerkleNodeMerge},                // merkle_node_merge
    {7444351342957461231ULL, "", H::kIlog2},                          // ilog2
    {9660728691489438960ULL, "", H::kExt2Inv},                        // ext2_inv
    {10656887096526143429ULL, "", H::kU32Ctz},                        // u32_ctz
    {11723176702659679401ULL, "insert_hqword", H::kHqwordToMap},      // hqword_to_map
    {11775886982554463322ULL, "push_mapvaln", H::kMapValueToStackN},  // map_value_to_stack_n_0
    {12846584985739176048ULL, "", H::kU32Clo},                        // u32_clo
    {17843484659000820118ULL, "push_mapval", H::kMapValueToStack},    // map_value_to_stack
};

// Sorted by id (checked below).
constexpr SystemEventRow kLibraryEvents[] = {
    {443020094570876606ULL, "miden::core::crypto::dsa::ecdsa_k256_keccak::verify",
     H::kEcdsaK256Verify},
    {1093736776208885424ULL, "readonly::miden_debug::frame_start", H::kNoop},
    {3244211558569184661ULL, "miden::core::crypto::dsa::falcon512_poseidon2::falcon_div",
     H::kFalconDiv},
    {3303765739211938263ULL, "miden::core::debug::print_adv_map", H::kDebugPrintAdvMap},
    {3615859677684068799ULL, "readonly::miden_debug::println", H::kNoop},
    {5311330421485803888ULL, "miden::core::debug::print_mem", H::kDebugPrintMem},
    {5401599259003246241ULL, "miden::core::debug::print_adv_map_item", H::kDebugPrintAdvMapItem},
    {5632710419893091072ULL, "miden::core::debug::print_stack", H::kDebugPrintStack},
    {5764050169426024773ULL, "miden::core::debug::print_adv_stack", H::kDebugPrintAdvStack},
    {5802503004314289270ULL, "miden::core::collections::sorted_array::lowerbound_key_value",
     H::kLowerboundKeyValue},
    {6229491882474008289ULL, "readonly::miden_debug::frame_end", H::kNoop},
    {8594990866026041322ULL, "miden::core::collections::smt::smt_peek", H::kSmtPeek},
    {9317875832330888348ULL, "miden::core::math::u256::u256_div", H::kCoreU256Div},
    {9459367498241328460ULL, "readonly::miden_debug::unknown", H::kNoop},
    {10187706227858647885ULL, "miden::core::collections::sorted_array::lowerbound_array",
     H::kLowerboundArray},
    {10207005686392958526ULL, "miden::core::crypto::aead::decrypt", H::kAeadDecrypt},
    {11865935436435611537ULL, "miden::core::debug::print_mem_all", H::kDebugPrintMemAll},
    {13528091056499565592ULL, "readonly::miden_debug::assertion_failed", H::kNoop},
    {14153021663962350784ULL, "miden::core::math::u64::u64_div", H::kCoreU64Div},
    {14438193807695912212ULL, "miden::core::dsa::eddsa_ed25519::verify", H::kEddsaEd25519Verify},
    {15409227627783267185ULL, "miden::core::hash::keccak256::hash_bytes", H::kKeccak256HashBytes},
    {15463989275656898604ULL, "miden::core::math::u128::u128_div", H::kCoreU128Div},
    {18006925272611184819ULL, "miden::core::hash::sha512::hash_bytes", H::kSha512HashBytes},
};

constexpr SystemEventLayout kLayout{
    .operand_offset = 1,
    .order = SystemEventLayout::Order::kElement0Top,
    .ext2 = SystemEventLayout::Ext2Field::kXSquaredMinus7,
    .unknown_events_fail = true,
};

template <size_t N>
constexpr bool IdsIncrease(const SystemEventRow (&rows)[N]) {
  for (size_t i = 1; i < N; ++i) {
    if (rows[i - 1].id >= rows[i].id) return false;
  }
  return true;
}
static_assert(IdsIncrease(kEvents), "kEvents must be sorted by id");
static_assert(IdsIncrease(kLibraryEvents), "kLibraryEvents must be sorted by id");

}  // namespace

const SystemEventTable& SystemEvents() {
  static const SystemEventTable* const table = [] {
    absl::StatusOr<SystemEventTable> t = SystemEventTable::Create(kEvents, kLayout, kLibraryEvents);
    if (!t.ok()) {  // a broken invariant of the static rows above
      std::fprintf(stderr, "v0.25 system events: %s\n", t.status().ToString().c_str());
      std::abort();
    }
    return new SystemEventTable(*std::move(t));
  }();
  return *table;
}

}  // namespace flamefleet::vm::v0_25

// The v0.25 system events (core/src/events/sys_events.rs at v0.25.7).
// Each id is the felt EventId::from_name("sys::<name>"): the first 8 bytes of BLAKE3 of the
// name as a little-endian u64, reduced mod p (checked by a test that recomputes them).
// TODO(#14): the v0.25 operand layouts of the handlers (the event id is at s0, operands from s1).
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

constexpr bool IdsIncrease() {
  for (size_t i = 1; i < std::size(kEvents); ++i) {
    if (kEvents[i - 1].id >= kEvents[i].id) return false;
  }
  return true;
}
static_assert(IdsIncrease(), "kEvents must be sorted by id");

}  // namespace

const SystemEventTable& SystemEvents() {
  static const SystemEventTable* const table = [] {
    absl::StatusOr<SystemEventTable> t = SystemEventTable::Create(kEvents);
    if (!t.ok()) {  // a broken invariant of the static rows above
      std::fprintf(stderr, "v0.25 system events: %s\n", t.status().ToString().c_str());
      std::abort();
    }
    return new SystemEventTable(*std::move(t));
  }();
  return *table;
}

}  // namespace flamefleet::vm::v0_25

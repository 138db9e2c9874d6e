// The v0.16 system events: the ids the v0.16 assembler emits for `adv.<event>` and for the
// hints behind `u32clz`, `ilog2`, `ext2inv`, `mtree_get`, ..., and the executor handler that
// answers each.
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include "absl/status/statusor.h"
#include "vm/dialects/v0_16/v0_16.h"
#include "vm/executor/system_events.h"

namespace flamefleet::vm::v0_16 {
namespace {

using H = SystemEventHandler;

// Sorted by id (checked below).
constexpr SystemEventRow kEvents[] = {
    {276124218, "", H::kMerkleNodeMerge},
    {361943238, "push_mtnode", H::kMerkleNodeToStack},
    {574478993, "push_mapval", H::kMapValueToStack},
    {630847990, "push_mapvaln", H::kMapValueToStackN},
    {652777600, "has_mapkey", H::kHasMapKey},
    {678156251, "push_u64div", H::kU64Div},
    {1251967401, "", H::kExt2Inv},
    {1889584556, "push_smtpeek", H::kSmtPeek},
    {1951932030, "", H::kU32Clz},
    {2008979519, "", H::kU32Ctz},
    {2032895094, "", H::kU32Clo},
    {2083700134, "", H::kU32Cto},
    {2297972669, "", H::kIlog2},
    {2389394361, "insert_mem", H::kMemToMap},
    {2391452729, "insert_hdword", H::kHdwordToMap},
    {2822590340, "insert_hdword_d", H::kHdwordToMapWithDomain},
    {3297060969, "insert_hperm", H::kHpermToMap},
    {3419226155, "push_falcon_div", H::kFalconDiv},
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
      std::fprintf(stderr, "v0.16 system events: %s\n", t.status().ToString().c_str());
      std::abort();
    }
    return new SystemEventTable(*std::move(t));
  }();
  return *table;
}

}  // namespace flamefleet::vm::v0_16

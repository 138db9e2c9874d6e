// BuildRowTally: the straight-line segments of a linearised program and their per-pass tables
// (vm/assembler/program.h).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "vm/assembler/opcodes.h"
#include "vm/assembler/program.h"

namespace flamefleet::vm {

bool FallsThrough(Opcode op) {
  switch (op) {
    case Opcode::kSplit:
    case Opcode::kLoop:
    case Opcode::kRepeat:
    case Opcode::kJump:
    case Opcode::kGosub:
    case Opcode::kReturn:
    case Opcode::kDynEnter:
    case Opcode::kFinish:
    case Opcode::kNoForest:
      return false;
    default:
      return true;
  }
}

RowTally BuildRowTally(const Program& program) {
  RowTally tally;
  // Mnemonics, interned.
  absl::flat_hash_map<std::string_view, uint32_t> ids;
  tally.source_mnemonic.reserve(program.source_ops.size());
  for (const SourceOp& op : program.source_ops) {
    auto [it, inserted] = ids.try_emplace(op.mnemonic(), static_cast<uint32_t>(ids.size()));
    if (inserted) tally.mnemonics.emplace_back(op.mnemonic());
    tally.source_mnemonic.push_back(it->second);
  }

  // Segment heads: pc 0, every pc after a row that does not fall through, every static jump
  // target and every procedure's entry (GOSUB and DYNENTER targets). Return addresses follow
  // GOSUB / DYNENTER, which do not fall through.
  const size_t n = program.code.size();
  std::vector<bool> head(n + 1, false);
  head[0] = true;
  for (size_t pc = 0; pc < n; ++pc) {
    const Instruction& in = program.code[pc];
    if (!FallsThrough(in.opcode)) head[pc + 1] = true;
    switch (in.opcode) {
      case Opcode::kSplit:
      case Opcode::kLoop:
      case Opcode::kRepeat:
      case Opcode::kJump:
      case Opcode::kGosub:
        if (in.aux <= n) head[in.aux] = true;
        break;
      default:
        break;
    }
    if (in.opcode == Opcode::kRepeat) tally.repeats.push_back(static_cast<uint32_t>(pc));
  }
  for (const ProcedureInfo& p : program.procedures) {
    if (p.entry_pc <= n) head[p.entry_pc] = true;
  }

  // Per segment, the keys its rows add, summed (a dense slot per key, reset per segment).
  const uint32_t num_mnemonics = static_cast<uint32_t>(tally.mnemonics.size());
  auto slot_of = [num_mnemonics](uint32_t key) -> size_t {
    if (key >= RowTally::kOpBase) return num_mnemonics + kNumOpcodes + (key - RowTally::kOpBase);
    if (key >= RowTally::kBlockBase) return num_mnemonics + (key - RowTally::kBlockBase);
    return key;
  };
  std::vector<RowTally::Entry> slots(num_mnemonics + 2 * kNumOpcodes);
  std::vector<size_t> touched;
  for (size_t pc = 0; pc < n;) {
    RowTally::Segment segment{.head = static_cast<uint32_t>(pc),
                              .first_entry = static_cast<uint32_t>(tally.entries.size())};
    do {
      ForEachRowKey(program, tally, static_cast<uint32_t>(pc),
                    [&](uint32_t key, uint32_t count, uint32_t cycles) {
                      const size_t s = slot_of(key);
                      if (slots[s].count == 0 && slots[s].cycles == 0) {
                        slots[s].key = key;
                        touched.push_back(s);
                      }
                      slots[s].count += count;
                      slots[s].cycles += cycles;
                    });
      ++pc;
    } while (pc < n && !head[pc]);
    segment.end = static_cast<uint32_t>(pc);
    segment.falls_through = FallsThrough(program.code[pc - 1].opcode);
    for (size_t s : touched) {
      tally.entries.push_back(slots[s]);
      slots[s] = RowTally::Entry{};
    }
    touched.clear();
    tally.segments.push_back(segment);
  }
  return tally;
}

}  // namespace flamefleet::vm

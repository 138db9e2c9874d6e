#include "vm/executor/debug_print.h"

#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace flamefleet::vm {
namespace {

// Text is gathered here and written to the stream in pieces of about this size, so a large
// print (an advice map entry of many values) never sits whole in memory.
constexpr size_t kFlushBytes = 64 * 1024;

// Writes one print: upstream's write_stack / write_interval over lists produced on demand.
class Writer {
 public:
  Writer(std::ostream* out, uint64_t max_items) : out_(out), max_items_(max_items) {}
  ~Writer() { Flush(); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  template <typename... Args>
  void Append(const Args&... args) {
    absl::StrAppend(&buffer_, args...);
    if (buffer_.size() >= kFlushBytes) Flush();
  }

  // write_stack(w, stack, None, label, clk) of processor/src/host/debug.rs over `size`
  // elements, element(i) the i-th from the top; more than max_items as write_stack(...,
  // Some(max_items), ...) shows them.
  void Stack(absl::string_view label, uint64_t clk, uint64_t size,
             absl::FunctionRef<Felt(uint64_t)> element) {
    if (size == 0) {
      Append(label, " empty before step ", clk, ".\n");
      return;
    }
    const uint64_t shown = std::min(size, max_items_);
    if (shown == 0) {
      Append(label, " state in interval [0, 0) before step ", clk, ":\n");
      return;
    }
    if (shown < size) {
      Append(label, " state in interval [0, ", shown - 1, "] before step ", clk, ":\n");
    } else {
      Append(label, " state before step ", clk, ":\n");
    }
    Interval(
        size, [](uint64_t i) { return absl::StrCat(i); },
        [&](uint64_t i) { Append(element(i).value()); });
  }

  // write_interval(w, items, remaining) of processor/src/host/debug.rs over the first
  // max_items of `count` items, the rest as "(N more items)": item i is label(i) right-aligned
  // to the widest shown label, ": ", then what value(i) appends.
  void Interval(uint64_t count, absl::FunctionRef<std::string(uint64_t)> label,
                absl::FunctionRef<void(uint64_t)> value) {
    const uint64_t shown = std::min(count, max_items_);
    const uint64_t remaining = count - shown;
    size_t width = 0;
    for (uint64_t i = 0; i < shown; ++i) width = std::max(width, label(i).size());
    const uint64_t lines = shown + (remaining > 0 ? 1 : 0);
    for (uint64_t i = 0; i < shown; ++i) {
      const std::string text = label(i);
      Append(i + 1 == lines ? "└── " : "├── ", std::string(width - text.size(), ' '), text, ": ");
      value(i);
      Append("\n");
    }
    if (remaining > 0) Append("└── (", remaining, " more items)\n");
  }

  void Flush() {
    if (buffer_.empty()) return;
    out_->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
    out_->flush();
    buffer_.clear();
  }

 private:
  std::ostream* out_;
  const uint64_t max_items_;
  std::string buffer_;
};

// `{addr:#010x}`: 0x and 8 hex digits.
std::string Address(uint32_t addr) { return absl::StrCat("0x", absl::Hex(addr, absl::kZeroPad8)); }

// format_word of debug.rs: "[a, b, c, d]", element 0 first.
std::string FormatWord(const Word& w) {
  return absl::StrCat("[", w[0].value(), ", ", w[1].value(), ", ", w[2].value(), ", ", w[3].value(),
                      "]");
}

// The operand stack of `view` top first: element i (the event id is element 0).
Felt StackElement(const DebugPrintView& view, uint64_t i) {
  return view.stack[view.stack.size() - 1 - i];
}

// Stack position `i` of `view` as an index (stack_item_as_usize of debug.rs: usize is 64 bits,
// so a felt always fits); zero past the stack, as below the depth-16 floor.
uint64_t StackItem(const DebugPrintView& view, uint64_t i) {
  return i < view.stack.size() ? StackElement(view, i).value() : 0;
}

void PrintMem(Writer& w, const DebugPrintView& view,
              const std::optional<std::pair<uint32_t, uint32_t>>& bounds) {
  if (!bounds.has_value()) {
    w.Append("Memory state before step ", view.clk, " for context ", view.ctx,
             ": range is empty.\n");
    return;
  }
  // Plain variables, not a structured binding: lambdas capture them (clang 14 cannot capture a
  // binding).
  const uint32_t first = bounds->first;
  const uint32_t last = bounds->second;
  w.Append("Memory state before step ", view.clk, " for context ", view.ctx, " in the range [",
           first, ", ", last, "]:\n");
  w.Interval(
      uint64_t{last} - first + 1,
      [&](uint64_t i) { return Address(static_cast<uint32_t>(first + i)); },
      [&](uint64_t i) {
        const std::optional<Felt> v = view.load(static_cast<uint32_t>(first + i));
        if (v.has_value()) {
          w.Append(v->value());
        } else {
          w.Append("EMPTY");
        }
      });
}

void PrintMemAll(Writer& w, const DebugPrintView& view) {
  w.Append("Memory state before step ", view.clk, " for context ", view.ctx, ":\n");
  std::vector<std::pair<uint32_t, Felt>> cells;
  const uint64_t total = view.written(view.max_items, &cells);
  // Every cell is counted: the ones past max_items in the "(N more items)" line.
  w.Interval(
      total, [&](uint64_t i) { return Address(cells[i].first); },
      [&](uint64_t i) { w.Append(cells[i].second.value()); });
}

void PrintAdvStack(Writer& w, const DebugPrintView& view) {
  // slice_range of debug.rs: [start, end) clamped to the stack and to start <= end; the advice
  // stack top first (its back() is popped next).
  const std::vector<Felt>& stack = view.advice.stack;
  const uint64_t len = stack.size();
  const uint64_t start = std::min(StackItem(view, 1), len);
  const uint64_t end = std::clamp(StackItem(view, 2), start, len);
  w.Stack("Advice stack", view.clk, end - start,
          [&](uint64_t i) { return stack[len - 1 - (start + i)]; });
}

void PrintAdvMap(Writer& w, const DebugPrintView& view) {
  const auto& map = view.advice.map;
  if (map.empty()) {
    w.Append("Advice map before step ", view.clk, ": empty.\n");
    return;
  }
  w.Append("Advice map before step ", view.clk, ":\n");
  // Upstream's map is a BTreeMap: entries in Word order. Only the shown ones are sorted.
  using Entry = std::pair<const Word, std::vector<Felt>>;
  std::vector<const Entry*> entries;
  entries.reserve(map.size());
  for (const Entry& e : map) entries.push_back(&e);
  const size_t shown = static_cast<size_t>(std::min<uint64_t>(entries.size(), view.max_items));
  auto less = [](const Entry* a, const Entry* b) { return WordLess(a->first, b->first); };
  std::partial_sort(entries.begin(), entries.begin() + static_cast<ptrdiff_t>(shown), entries.end(),
                    less);
  w.Interval(
      entries.size(), [&](uint64_t i) { return FormatWord(entries[i]->first); },
      [&](uint64_t i) {
        // format_felt_slice of debug.rs: every value of the entry.
        const std::vector<Felt>& values = entries[i]->second;
        w.Append("[");
        for (size_t j = 0; j < values.size(); ++j) {
          if (j > 0) w.Append(", ");
          w.Append(values[j].value());
        }
        w.Append("]");
      });
}

void PrintAdvMapItem(Writer& w, const DebugPrintView& view) {
  // get_stack_word(1): element 0 at position 1.
  const Word key{Felt(StackItem(view, 1)), Felt(StackItem(view, 2)), Felt(StackItem(view, 3)),
                 Felt(StackItem(view, 4))};
  const std::string key_text = FormatWord(key);
  auto it = view.advice.map.find(key);
  if (it == view.advice.map.end()) {
    w.Append("No advice map entry for key ", key_text, " before step ", view.clk, ".\n");
    return;
  }
  w.Append("Advice map entry for key ", key_text, " before step ", view.clk, ":\n");
  const std::vector<Felt>& values = it->second;
  w.Interval(
      values.size(), [](uint64_t i) { return absl::StrCat(i); },
      [&](uint64_t i) { w.Append(values[i].value()); });
}

}  // namespace

absl::StatusOr<std::optional<std::pair<uint32_t, uint32_t>>> PrintMemBounds(uint64_t start,
                                                                            uint64_t end) {
  constexpr uint64_t kU32Max = 0xFFFFFFFFULL;
  if (start > kU32Max) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory address cannot exceed 2^32 but was ", start));
  }
  // The exclusive end may be one past the last address (2^32).
  if (end > kU32Max + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory address cannot exceed 2^32 but was ", end));
  }
  if (start > end) {
    return absl::InvalidArgumentError(absl::StrCat(
        "memory range start address cannot exceed end address, but was (", start, ", ", end, ")"));
  }
  if (start == end) return std::nullopt;
  if (end - start > kMaxPrintMemRange) {
    return absl::InvalidArgumentError(absl::StrCat("print_mem range length ", end - start,
                                                   " exceeds maximum of ", kMaxPrintMemRange));
  }
  return std::make_pair(static_cast<uint32_t>(start), static_cast<uint32_t>(end - 1));
}

absl::Status WriteDebugPrint(SystemEventHandler handler, const DebugPrintView& view,
                             std::ostream* out) {
  using H = SystemEventHandler;
  // print_mem's range is checked before anything is written.
  std::optional<std::pair<uint32_t, uint32_t>> bounds;
  if (handler == H::kDebugPrintMem) {
    absl::StatusOr<std::optional<std::pair<uint32_t, uint32_t>>> checked =
        PrintMemBounds(StackItem(view, 1), StackItem(view, 2));
    if (!checked.ok()) return checked.status();
    bounds = *checked;
  }
  Writer w(out, view.max_items);
  switch (handler) {
    case H::kDebugPrintStack:
      // Without the event id at position 0: the whole stack below it.
      w.Stack("Stack", view.clk, view.stack.empty() ? 0 : view.stack.size() - 1,
              [&](uint64_t i) { return StackElement(view, i + 1); });
      return absl::OkStatus();
    case H::kDebugPrintMem:
      PrintMem(w, view, bounds);
      return absl::OkStatus();
    case H::kDebugPrintMemAll:
      PrintMemAll(w, view);
      return absl::OkStatus();
    case H::kDebugPrintAdvStack:
      PrintAdvStack(w, view);
      return absl::OkStatus();
    case H::kDebugPrintAdvMap:
      PrintAdvMap(w, view);
      return absl::OkStatus();
    case H::kDebugPrintAdvMapItem:
      PrintAdvMapItem(w, view);
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError("not a debug print event");
  }
}

}  // namespace flamefleet::vm

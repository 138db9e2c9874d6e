#include "runner/snapshot.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/file.h"
#include "common/status_macros.h"
#include "vm/crypto/blake3.h"

namespace flamefleet::runner {
namespace {

constexpr char kHex[] = "0123456789abcdef";

std::string Hex(const uint8_t* data, size_t n) {
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kHex[data[i] >> 4]);
    out.push_back(kHex[data[i] & 15]);
  }
  return out;
}

std::array<uint8_t, 8> Checksum(absl::string_view payload) {
  std::array<uint8_t, 32> digest = vm::Blake3(payload);
  std::array<uint8_t, 8> out;
  std::copy_n(digest.begin(), 8, out.begin());
  return out;
}

void PutLe(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetLe(absl::string_view in, size_t offset, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= uint64_t{static_cast<uint8_t>(in[offset + static_cast<size_t>(i)])} << (8 * i);
  }
  return v;
}

// ---- conversions between the VM's types and the snapshot messages

void SetWord(const vm::Word& w, v1::SnapshotWord* out) {
  for (vm::Felt f : w) out->add_elements(f.value());
}

template <typename Values>
void AddFelts(const std::vector<vm::Felt>& felts, Values* out) {
  out->Reserve(static_cast<int>(felts.size()));
  for (vm::Felt f : felts) out->Add(f.value());
}

std::vector<vm::Felt> Felts(const google::protobuf::RepeatedField<uint64_t>& values) {
  std::vector<vm::Felt> out;
  out.reserve(static_cast<size_t>(values.size()));
  for (uint64_t v : values) out.push_back(vm::Felt(v));
  return out;
}

vm::Word WordOf(const v1::SnapshotWord& w) {
  return vm::Word{vm::Felt(w.elements(0)), vm::Felt(w.elements(1)), vm::Felt(w.elements(2)),
                  vm::Felt(w.elements(3))};
}

void SetMapEntry(const vm::Word& key, const std::vector<vm::Felt>& values,
                 v1::SnapshotMapEntry* out) {
  SetWord(key, out->mutable_key());
  AddFelts(values, out->mutable_values());
}

v1::SnapshotInputs InputsToProto(const vm::ProgramInputs& inputs) {
  v1::SnapshotInputs out;
  AddFelts(inputs.stack, out.mutable_stack());
  AddFelts(inputs.advice_stack, out.mutable_advice_stack());
  for (const auto& [key, values] : inputs.advice_map) {
    SetMapEntry(key, values, out.add_advice_map());
  }
  for (const vm::MerkleStoreInput& m : inputs.merkle_store) {
    v1::SnapshotMerkleStore* store = out.add_merkle_store();
    switch (m.kind) {
      case vm::MerkleStoreInput::Kind::kMerkleTree:
        store->set_kind(v1::SnapshotMerkleStore::KIND_MERKLE_TREE);
        break;
      case vm::MerkleStoreInput::Kind::kSparseMerkleTree:
        store->set_kind(v1::SnapshotMerkleStore::KIND_SPARSE_MERKLE_TREE);
        break;
      case vm::MerkleStoreInput::Kind::kPartialMerkleTree:
        store->set_kind(v1::SnapshotMerkleStore::KIND_PARTIAL_MERKLE_TREE);
        break;
    }
    for (uint64_t i : m.indices) store->add_indices(i);
    for (const vm::Word& w : m.leaves) SetWord(w, store->add_leaves());
  }
  if (inputs.max_cycles.has_value()) out.set_max_cycles(*inputs.max_cycles);
  return out;
}

vm::ProgramInputs InputsFromProto(const v1::SnapshotInputs& in) {
  vm::ProgramInputs out;
  out.stack = Felts(in.stack());
  out.advice_stack = Felts(in.advice_stack());
  for (const v1::SnapshotMapEntry& e : in.advice_map()) {
    out.advice_map.emplace_back(WordOf(e.key()), Felts(e.values()));
  }
  for (const v1::SnapshotMerkleStore& s : in.merkle_store()) {
    vm::MerkleStoreInput m;
    switch (s.kind()) {
      case v1::SnapshotMerkleStore::KIND_SPARSE_MERKLE_TREE:
        m.kind = vm::MerkleStoreInput::Kind::kSparseMerkleTree;
        break;
      case v1::SnapshotMerkleStore::KIND_PARTIAL_MERKLE_TREE:
        m.kind = vm::MerkleStoreInput::Kind::kPartialMerkleTree;
        break;
      default:
        m.kind = vm::MerkleStoreInput::Kind::kMerkleTree;
        break;
    }
    m.indices.assign(s.indices().begin(), s.indices().end());
    for (const v1::SnapshotWord& w : s.leaves()) m.leaves.push_back(WordOf(w));
    out.merkle_store.push_back(std::move(m));
  }
  if (in.has_max_cycles()) out.max_cycles = in.max_cycles();
  return out;
}

// ---- validation of decoded snapshots

absl::Status CheckFelts(const google::protobuf::RepeatedField<uint64_t>& values,
                        absl::string_view field) {
  for (int i = 0; i < values.size(); ++i) {
    if (!vm::Felt::IsCanonical(values[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[", i, "]: ", values[i], " is not a field element (>= p)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWord(const v1::SnapshotWord& w, absl::string_view field) {
  if (w.elements_size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": a word has 4 elements, not ", w.elements_size()));
  }
  return CheckFelts(w.elements(), field);
}

absl::Status CheckMapEntries(const google::protobuf::RepeatedPtrField<v1::SnapshotMapEntry>& map,
                             absl::string_view field) {
  for (int i = 0; i < map.size(); ++i) {
    std::string name = absl::StrCat(field, "[", i, "]");
    FLAMEFLEET_RETURN_IF_ERROR(CheckWord(map[i].key(), absl::StrCat(name, ".key")));
    FLAMEFLEET_RETURN_IF_ERROR(CheckFelts(map[i].values(), absl::StrCat(name, ".values")));
  }
  return absl::OkStatus();
}

bool ValidNamespace(absl::string_view ns) {
  return !ns.empty() && !absl::StrContains(ns, "/") && !absl::StrContains(ns, "::");
}

bool ValidRelativePath(absl::string_view path) {
  if (path.empty() || path.front() == '/') return false;
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

// The directory prefix of a kernel's submodule files: "kern/" for "kern/mod.masm", "" for a
// kernel without a directory (as the linker builds their paths).
std::string KernelDirectory(absl::string_view kernel_path) {
  const size_t slash = kernel_path.rfind('/');
  return slash == absl::string_view::npos ? "" : std::string(kernel_path.substr(0, slash + 1));
}

absl::Status Corrupted(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("snapshot is corrupted: ", what));
}

absl::StatusOr<vm::Dialect> DialectOf(const v1::SnapshotProgram& program) {
  if (program.dialect().empty()) return vm::kUnnamedLegacyDialect;
  absl::StatusOr<vm::Dialect> dialect = vm::ParseDialect(program.dialect());
  if (!dialect.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("snapshot: program.dialect: ", dialect.status().message()));
  }
  return *dialect;
}

absl::Status ValidateProgram(const v1::SnapshotProgram& program) {
  if (program.name().empty()) return Corrupted("the program has no name");
  FLAMEFLEET_RETURN_IF_ERROR(DialectOf(program).status());
  if (program.digest() != SourceDigest(program.source())) {
    return Corrupted(absl::StrCat("the source of ", program.name(), " does not match its digest"));
  }
  if (program.has_kernel()) {
    const v1::SnapshotModule& kernel = program.kernel();
    if (kernel.path().empty() || kernel.path() == program.name()) {
      return Corrupted("the kernel has no path of its own");
    }
    if (kernel.digest() != SourceDigest(kernel.source())) {
      return Corrupted(absl::StrCat("the kernel ", kernel.path(), " does not match its digest"));
    }
    const std::string dir = KernelDirectory(kernel.path());
    absl::flat_hash_set<std::string> paths = {kernel.path()};
    for (const v1::SnapshotModule& module : program.kernel_modules()) {
      if (!absl::StartsWith(module.path(), dir) ||
          !ValidRelativePath(absl::string_view(module.path()).substr(dir.size()))) {
        return Corrupted(absl::StrCat("kernel module '", module.path(),
                                      "' is not a file beside the kernel ", kernel.path()));
      }
      if (!paths.insert(module.path()).second) {
        return Corrupted(absl::StrCat("kernel module '", module.path(), "' appears twice"));
      }
      if (module.digest() != SourceDigest(module.source())) {
        return Corrupted(
            absl::StrCat("kernel module ", module.path(), " does not match its digest"));
      }
    }
  } else if (program.kernel_modules_size() > 0) {
    return Corrupted("kernel modules without a kernel");
  }
  absl::flat_hash_set<std::string> namespaces;
  for (const v1::SnapshotLibrary& lib : program.libraries()) {
    if (!ValidNamespace(lib.namespace_())) {
      return Corrupted(absl::StrCat("invalid library namespace '", lib.namespace_(), "'"));
    }
    if (!namespaces.insert(lib.namespace_()).second) {
      return Corrupted(absl::StrCat("library namespace '", lib.namespace_(), "' appears twice"));
    }
    if (lib.dir().empty()) {
      return Corrupted(absl::StrCat("library '", lib.namespace_(), "' has no directory"));
    }
    absl::flat_hash_set<std::string> paths;
    for (const v1::SnapshotModule& module : lib.modules()) {
      if (!ValidRelativePath(module.path())) {
        return Corrupted(absl::StrCat("library '", lib.namespace_(), "': invalid module path '",
                                      module.path(), "'"));
      }
      if (!paths.insert(module.path()).second) {
        return Corrupted(absl::StrCat("library '", lib.namespace_(), "': module '", module.path(),
                                      "' appears twice"));
      }
      if (module.digest() != SourceDigest(module.source())) {
        return Corrupted(absl::StrCat("module ", lib.namespace_(), "/", module.path(),
                                      " does not match its digest"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateInputs(const v1::SnapshotInputs& in) {
  if (in.stack_size() > vm::kMaxStackInputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("inputs.stack: ", in.stack_size(), " values; at most 16 are allowed"));
  }
  FLAMEFLEET_RETURN_IF_ERROR(CheckFelts(in.stack(), "inputs.stack"));
  FLAMEFLEET_RETURN_IF_ERROR(CheckFelts(in.advice_stack(), "inputs.advice_stack"));
  FLAMEFLEET_RETURN_IF_ERROR(CheckMapEntries(in.advice_map(), "inputs.advice_map"));
  for (int i = 0; i < in.merkle_store_size(); ++i) {
    const v1::SnapshotMerkleStore& s = in.merkle_store(i);
    std::string name = absl::StrCat("inputs.merkle_store[", i, "]");
    size_t leaves = static_cast<size_t>(s.leaves_size());
    size_t indices = static_cast<size_t>(s.indices_size());
    bool ok = false;
    switch (s.kind()) {
      case v1::SnapshotMerkleStore::KIND_MERKLE_TREE:
        ok = indices == 0;
        break;
      case v1::SnapshotMerkleStore::KIND_SPARSE_MERKLE_TREE:
        ok = indices == leaves;
        break;
      case v1::SnapshotMerkleStore::KIND_PARTIAL_MERKLE_TREE:
        ok = indices == 2 * leaves;
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(name, ": unknown kind ", s.kind()));
    }
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", indices, " indices do not fit ", leaves, " leaves"));
    }
    for (int j = 0; j < s.leaves_size(); ++j) {
      FLAMEFLEET_RETURN_IF_ERROR(CheckWord(s.leaves(j), absl::StrCat(name, ".leaves[", j, "]")));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSnapshot(const v1::ReplaySnapshot& s) {
  FLAMEFLEET_RETURN_IF_ERROR(ValidateProgram(s.program()));
  FLAMEFLEET_RETURN_IF_ERROR(ValidateInputs(s.inputs()));
  for (int i = 0; i < s.events_size(); ++i) {
    const v1::SnapshotEvent& e = s.events(i);
    std::string name = absl::StrCat("events[", i, "]");
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckFelts(e.advice_stack_pushed(), absl::StrCat(name, ".advice_stack_pushed")));
    FLAMEFLEET_RETURN_IF_ERROR(
        CheckMapEntries(e.advice_map_inserted(), absl::StrCat(name, ".advice_map_inserted")));
  }
  if (s.has_outcome()) {
    if (s.outcome().stack_size() > 16) {
      return absl::InvalidArgumentError("outcome.stack: more than 16 values");
    }
    FLAMEFLEET_RETURN_IF_ERROR(CheckFelts(s.outcome().stack(), "outcome.stack"));
  }
  return absl::OkStatus();
}

// ---- recording

absl::StatusOr<v1::SnapshotProgram> CollectProgram(
    const vm::Program& program, const std::vector<std::pair<std::string, std::string>>& libraries,
    const std::string& kernel_path) {
  if (program.sources == nullptr || program.sources->size() == 0) {
    return absl::InternalError("the assembled program has no sources");
  }
  const vm::SourceManager& sources = *program.sources;
  v1::SnapshotProgram out;
  out.set_name(sources.path(0));
  out.set_dialect(std::string(program.dialect->name));
  out.set_source(sources.text(0));
  out.set_digest(SourceDigest(sources.text(0)));
  std::vector<v1::SnapshotLibrary> libs(libraries.size());
  for (size_t i = 0; i < libraries.size(); ++i) {
    libs[i].set_namespace_(libraries[i].first);
    libs[i].set_dir(libraries[i].second);
  }
  for (uint32_t id = 1; id < sources.size(); ++id) {
    const std::string& path = sources.path(id);
    if (!kernel_path.empty() && path == kernel_path) {
      v1::SnapshotModule* kernel = out.mutable_kernel();
      kernel->set_path(path);
      kernel->set_source(sources.text(id));
      kernel->set_digest(SourceDigest(sources.text(id)));
      continue;
    }
    // The library whose directory is the longest prefix of the path (the assembler built the
    // path as DIR + "/" + a/b.masm).
    size_t best = libraries.size();
    for (size_t i = 0; i < libraries.size(); ++i) {
      const std::string& dir = libraries[i].second;
      if (path.size() > dir.size() + 1 && absl::StartsWith(path, dir) && path[dir.size()] == '/' &&
          (best == libraries.size() || dir.size() > libraries[best].second.size())) {
        best = i;
      }
    }
    if (best == libraries.size()) {
      // Else a submodule of the kernel, read from beside it.
      if (kernel_path.empty() || !absl::StartsWith(path, KernelDirectory(kernel_path))) {
        return absl::InternalError(absl::StrCat("loaded module ", path, " is in no library"));
      }
      v1::SnapshotModule* module = out.add_kernel_modules();
      module->set_path(path);
      module->set_source(sources.text(id));
      module->set_digest(SourceDigest(sources.text(id)));
      continue;
    }
    v1::SnapshotModule* module = libs[best].add_modules();
    module->set_path(path.substr(libraries[best].second.size() + 1));
    module->set_source(sources.text(id));
    module->set_digest(SourceDigest(sources.text(id)));
  }
  for (v1::SnapshotLibrary& lib : libs) {
    if (lib.modules_size() > 0) *out.add_libraries() = std::move(lib);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> CleanLibraries(
    std::vector<std::pair<std::string, std::string>> libraries) {
  for (auto& [ns, dir] : libraries) {
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  }
  return libraries;
}

absl::StatusOr<Recording> Record(const vm::Program& program,
                                 const std::vector<std::pair<std::string, std::string>>& libs,
                                 const vm::ProgramInputs& inputs, const RecordOptions& options) {
  Recording rec;
  rec.snapshot.set_format_version(kSnapshotFormatVersion);
  FLAMEFLEET_ASSIGN_OR_RETURN(*rec.snapshot.mutable_program(),
                              CollectProgram(program, libs, options.kernel_path));
  *rec.snapshot.mutable_inputs() = InputsToProto(inputs);
  rec.snapshot.mutable_options()->set_max_cycles(options.execution.max_cycles);
  rec.snapshot.mutable_options()->set_max_stack_depth(options.execution.max_stack_depth);
  rec.snapshot.mutable_options()->set_max_memory_bytes(options.execution.max_memory_bytes);
  RecordingHost host(options.host);
  absl::StatusOr<vm::RunResult> result = vm::RunProgram(program, inputs, options.execution, &host);
  for (v1::SnapshotEvent& e : host.TakeEvents()) *rec.snapshot.add_events() = std::move(e);
  if (result.ok()) {
    rec.result = *std::move(result);
    rec.snapshot.mutable_outcome()->set_cycles(rec.result.cycles);
    AddFelts(rec.result.stack, rec.snapshot.mutable_outcome()->mutable_stack());
  } else {
    rec.run_status = result.status();
  }
  return rec;
}

}  // namespace

std::string SourceDigest(absl::string_view text) {
  std::array<uint8_t, 32> digest = vm::Blake3(text);
  return absl::StrCat("blake3:", Hex(digest.data(), digest.size()));
}

std::string SnapshotSourceDigest(const v1::SnapshotProgram& program) {
  std::vector<std::string> parts;
  for (const v1::SnapshotLibrary& lib : program.libraries()) {
    for (const v1::SnapshotModule& m : lib.modules()) {
      parts.push_back(absl::StrCat(lib.namespace_(), "/", m.path(), "\n", m.digest(), "\n"));
    }
  }
  std::sort(parts.begin(), parts.end());
  std::string all = absl::StrCat("entry\n", SourceDigest(program.source()), "\n");
  for (const std::string& p : parts) absl::StrAppend(&all, p);
  if (program.has_kernel()) absl::StrAppend(&all, "kernel\n", program.kernel().digest(), "\n");
  for (const v1::SnapshotModule& m : program.kernel_modules()) {
    absl::StrAppend(&all, "kernel ", m.path(), "\n", m.digest(), "\n");
  }
  return SourceDigest(all);
}

// ---- hosts

absl::Status RecordingHost::OnEvent(uint64_t event_id, uint64_t clk, const vm::Executor& executor,
                                    vm::AdviceProvider& advice) {
  v1::SnapshotEvent& entry = events_.emplace_back();
  entry.set_event_id(event_id);
  entry.set_clk(clk);
  if (live_ == nullptr) return absl::OkStatus();
  // Keep a copy of the advice to see what the live host changed (events are rare next to
  // cycles, so the copy is not on any hot path).
  vm::AdviceProvider before = advice;
  absl::Status status = live_->OnEvent(event_id, clk, executor, advice);
  if (advice.stack.size() < before.stack.size() ||
      !std::equal(before.stack.begin(), before.stack.end(), advice.stack.begin())) {
    return absl::UnimplementedError(absl::StrCat(
        "event ", event_id, " at cycle ", clk,
        ": the host changed or removed advice-stack values; only pushes can be recorded"));
  }
  AddFelts(std::vector<vm::Felt>(advice.stack.begin() + static_cast<ptrdiff_t>(before.stack.size()),
                                 advice.stack.end()),
           entry.mutable_advice_stack_pushed());
  for (const auto& [key, values] : before.map) {
    if (!advice.map.contains(key)) {
      return absl::UnimplementedError(
          absl::StrCat("event ", event_id, " at cycle ", clk,
                       ": the host removed an advice-map entry; only insertions can be recorded"));
    }
  }
  std::vector<std::pair<vm::Word, const std::vector<vm::Felt>*>> inserted;
  for (const auto& [key, values] : advice.map) {
    auto it = before.map.find(key);
    if (it == before.map.end() || it->second != values) inserted.emplace_back(key, &values);
  }
  // The map's iteration order is not stable across processes; the log's order is.
  std::sort(inserted.begin(), inserted.end(), [](const auto& a, const auto& b) {
    for (int i = 0; i < 4; ++i) {
      if (a.first[i] != b.first[i]) return a.first[i].value() < b.first[i].value();
    }
    return false;
  });
  for (const auto& [key, values] : inserted) {
    SetMapEntry(key, *values, entry.add_advice_map_inserted());
  }
  return status;
}

bool RecordingHost::AnswersPrecompile(uint64_t event_id) const {
  return live_ != nullptr && live_->AnswersPrecompile(event_id);
}

absl::Status RecordingHost::OnPrecompileAnswered(uint64_t event_id, uint64_t clk,
                                                 std::span<const vm::Felt> pushed,
                                                 const vm::PrecompileRequest* request) {
  v1::SnapshotEvent& entry = events_.emplace_back();
  entry.set_event_id(event_id);
  entry.set_clk(clk);
  AddFelts(std::vector<vm::Felt>(pushed.begin(), pushed.end()),
           entry.mutable_advice_stack_pushed());
  if (request != nullptr) {
    entry.set_precompile_calldata(std::string(request->calldata.begin(), request->calldata.end()));
  }
  if (live_ == nullptr) return absl::OkStatus();
  return live_->OnPrecompileAnswered(event_id, clk, pushed, request);
}

bool ReplayHost::AnswersPrecompile(uint64_t event_id) const {
  return next_ < static_cast<size_t>(snapshot_->events_size()) &&
         snapshot_->events(static_cast<int>(next_)).event_id() == event_id;
}

ReplayHost::ReplayHost(const v1::ReplaySnapshot* snapshot) : snapshot_(snapshot) {}

absl::Status ReplayHost::OnEvent(uint64_t event_id, uint64_t clk, const vm::Executor& executor,
                                 vm::AdviceProvider& advice) {
  (void)executor;
  const size_t total = static_cast<size_t>(snapshot_->events_size());
  if (next_ >= total) {
    return absl::FailedPreconditionError(
        absl::StrCat("replay diverged at cycle ", clk, ": event ", event_id,
                     " has no entry in the event log (all ", total, " recorded events were used)"));
  }
  const v1::SnapshotEvent& entry = snapshot_->events(static_cast<int>(next_));
  if (entry.event_id() != event_id) {
    return absl::FailedPreconditionError(absl::StrCat(
        "replay diverged at cycle ", clk, ": event ", event_id, ", but event log entry ", next_,
        " is event ", entry.event_id(), " (recorded at cycle ", entry.clk(), ")"));
  }
  ++next_;
  for (uint64_t v : entry.advice_stack_pushed()) advice.stack.push_back(vm::Felt(v));
  for (const v1::SnapshotMapEntry& e : entry.advice_map_inserted()) {
    advice.map.insert_or_assign(WordOf(e.key()), Felts(e.values()));
  }
  return absl::OkStatus();
}

absl::Status ReplayHost::CheckFinished(uint64_t clk) const {
  const size_t total = static_cast<size_t>(snapshot_->events_size());
  if (next_ == total) return absl::OkStatus();
  const v1::SnapshotEvent& entry = snapshot_->events(static_cast<int>(next_));
  return absl::FailedPreconditionError(
      absl::StrCat("replay diverged at cycle ", clk, ": the program finished, but event log entry ",
                   next_, " (event ", entry.event_id(), ", recorded at cycle ", entry.clk(),
                   ") and ", total - next_ - 1, " more were never used"));
}

// ---- record

namespace {

// The assembler options of a recording: its libraries (cleaned), kernel and dialect.
vm::AssemblerOptions RecordingAssemblerOptions(
    const RecordOptions& options, const std::vector<std::pair<std::string, std::string>>& libs) {
  vm::AssemblerOptions assembler_options;
  assembler_options.libraries = libs;
  assembler_options.kernel_path = options.kernel_path;
  assembler_options.dialect = options.dialect;
  return assembler_options;
}

}  // namespace

absl::StatusOr<Recording> RecordFile(const std::string& path, const vm::ProgramInputs& inputs,
                                     const RecordOptions& options) {
  std::vector<std::pair<std::string, std::string>> libs = CleanLibraries(options.libraries);
  const vm::AssemblerOptions assembler_options = RecordingAssemblerOptions(options, libs);
  FLAMEFLEET_ASSIGN_OR_RETURN(
      vm::Program program, vm::Assembler(assembler_options).AssembleFile(path, options.assemble));
  return Record(program, libs, inputs, options);
}

absl::StatusOr<Recording> RecordSource(absl::string_view name, absl::string_view text,
                                       const vm::ProgramInputs& inputs,
                                       const RecordOptions& options) {
  std::vector<std::pair<std::string, std::string>> libs = CleanLibraries(options.libraries);
  const vm::AssemblerOptions assembler_options = RecordingAssemblerOptions(options, libs);
  FLAMEFLEET_ASSIGN_OR_RETURN(
      vm::Program program,
      vm::Assembler(assembler_options).AssembleSource(name, text, options.assemble));
  return Record(program, libs, inputs, options);
}

// ---- encoding

std::string EncodeSnapshot(const v1::ReplaySnapshot& snapshot) {
  v1::ReplaySnapshot copy = snapshot;
  copy.set_format_version(kSnapshotFormatVersion);
  std::string payload;
  copy.SerializeToString(&payload);
  std::string out(kSnapshotMagic, sizeof(kSnapshotMagic));
  PutLe(out, kSnapshotFormatVersion, 4);
  PutLe(out, payload.size(), 8);
  std::array<uint8_t, 8> checksum = Checksum(payload);
  out.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());
  out.append(payload);
  return out;
}

absl::StatusOr<v1::ReplaySnapshot> DecodeSnapshot(absl::string_view bytes) {
  const absl::string_view magic(kSnapshotMagic, sizeof(kSnapshotMagic));
  if (bytes.size() < magic.size()) {
    if (absl::StartsWith(magic, bytes)) {
      return absl::InvalidArgumentError(absl::StrCat("snapshot is truncated: ", bytes.size(),
                                                     " bytes, the header alone has ",
                                                     kSnapshotHeaderBytes));
    }
    return absl::InvalidArgumentError("not a flamefleet snapshot (no FFSNAP magic)");
  }
  if (bytes.substr(0, magic.size()) != magic) {
    return absl::InvalidArgumentError("not a flamefleet snapshot (no FFSNAP magic)");
  }
  if (bytes.size() < 12) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot is truncated: ", bytes.size(),
                                                   " bytes, the header alone has ",
                                                   kSnapshotHeaderBytes));
  }
  const uint32_t version = static_cast<uint32_t>(GetLe(bytes, 8, 4));
  if (version > kSnapshotFormatVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "snapshot format version ", version, " is newer than this flamefleet supports (",
        kSnapshotFormatVersion, "); upgrade flamefleet to read it"));
  }
  if (version == 0) return Corrupted("format version 0 does not exist");
  if (bytes.size() < kSnapshotHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot is truncated: ", bytes.size(),
                                                   " bytes, the header alone has ",
                                                   kSnapshotHeaderBytes));
  }
  const uint64_t length = GetLe(bytes, 12, 8);
  if (length > kMaxSnapshotBytes) {
    return Corrupted(absl::StrCat("payload length ", length, " exceeds the limit of ",
                                  kMaxSnapshotBytes, " bytes"));
  }
  absl::string_view payload = bytes.substr(kSnapshotHeaderBytes);
  if (payload.size() < length) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot is truncated: the payload has ",
                                                   payload.size(), " of ", length, " bytes"));
  }
  if (payload.size() > length) {
    return Corrupted(absl::StrCat(payload.size() - length, " unexpected bytes after the payload"));
  }
  std::array<uint8_t, 8> checksum = Checksum(payload);
  if (std::memcmp(checksum.data(), bytes.data() + 20, checksum.size()) != 0) {
    return Corrupted("checksum mismatch");
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(v1::ReplaySnapshot snapshot, DecodeSnapshotPayload(payload));
  if (snapshot.format_version() != version) {
    return Corrupted(absl::StrCat("the header says version ", version, ", the payload ",
                                  snapshot.format_version()));
  }
  return snapshot;
}

absl::StatusOr<v1::ReplaySnapshot> DecodeSnapshotPayload(absl::string_view payload) {
  if (payload.size() > kMaxSnapshotBytes || payload.size() > static_cast<size_t>(INT_MAX)) {
    return Corrupted("payload too large");
  }
  v1::ReplaySnapshot snapshot;
  if (!snapshot.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return Corrupted("the payload does not parse");
  }
  FLAMEFLEET_RETURN_IF_ERROR(ValidateSnapshot(snapshot));
  return snapshot;
}

// ---- files

absl::Status WriteSnapshotFile(const std::string& path, const v1::ReplaySnapshot& snapshot) {
  // Temp file beside it, fsync, rename, fsync of the directory (common/file.h).
  absl::Status st = WriteFileAtomically(path, EncodeSnapshot(snapshot));
  if (!st.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot write ", path, ": ", st.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ReplaySnapshot> LoadSnapshotFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::InvalidArgumentError(absl::StrCat(path, ": ", ec.message()));
  if (size > kMaxSnapshotBytes + kSnapshotHeaderBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", size, " bytes; snapshots over ",
                                                   kMaxSnapshotBytes, " bytes are refused"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot be read"));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<v1::ReplaySnapshot> snapshot = DecodeSnapshot(bytes);
  if (!snapshot.ok()) {
    return absl::Status(snapshot.status().code(),
                        absl::StrCat(path, ": ", snapshot.status().message()));
  }
  return snapshot;
}

// ---- replay

absl::StatusOr<vm::Dialect> SnapshotDialect(const v1::ReplaySnapshot& snapshot) {
  return DialectOf(snapshot.program());
}

absl::StatusOr<ReplayPlan> PrepareReplay(const v1::ReplaySnapshot& snapshot,
                                         std::optional<uint64_t> max_cycles,
                                         std::optional<uint64_t> max_memory_bytes) {
  vm::AssemblerOptions assembler_options;
  assembler_options.read_disk = false;
  FLAMEFLEET_ASSIGN_OR_RETURN(assembler_options.dialect, SnapshotDialect(snapshot));
  for (const v1::SnapshotLibrary& lib : snapshot.program().libraries()) {
    assembler_options.libraries.emplace_back(lib.namespace_(), lib.dir());
    for (const v1::SnapshotModule& module : lib.modules()) {
      assembler_options.virtual_files[absl::StrCat(lib.dir(), "/", module.path())] =
          module.source();
    }
  }
  if (snapshot.program().has_kernel()) {
    const v1::SnapshotModule& kernel = snapshot.program().kernel();
    assembler_options.kernel_path = kernel.path();
    assembler_options.virtual_files[kernel.path()] = kernel.source();
    for (const v1::SnapshotModule& module : snapshot.program().kernel_modules()) {
      assembler_options.virtual_files[module.path()] = module.source();
    }
  }
  ReplayPlan plan;
  FLAMEFLEET_ASSIGN_OR_RETURN(
      plan.program, vm::Assembler(std::move(assembler_options))
                        .AssembleSource(snapshot.program().name(), snapshot.program().source()));
  plan.inputs = InputsFromProto(snapshot.inputs());
  if (snapshot.has_options()) {
    plan.options.max_cycles = snapshot.options().max_cycles();
    // Never above the default: the snapshot may be hostile.
    if (snapshot.options().max_stack_depth() != 0) {
      plan.options.max_stack_depth =
          std::min(plan.options.max_stack_depth, snapshot.options().max_stack_depth());
    }
    // Likewise for the memory budget: a larger recorded one needs an explicit override.
    if (snapshot.options().has_max_memory_bytes()) {
      plan.options.max_memory_bytes =
          std::min(plan.options.max_memory_bytes, snapshot.options().max_memory_bytes());
    }
  }
  if (max_cycles.has_value()) plan.options.max_cycles = *max_cycles;
  if (max_memory_bytes.has_value()) plan.options.max_memory_bytes = *max_memory_bytes;
  return plan;
}

absl::StatusOr<vm::RunResult> ReplayRun(const v1::ReplaySnapshot& snapshot,
                                        std::optional<uint64_t> max_cycles,
                                        std::optional<uint64_t> max_memory_bytes,
                                        std::ostream* debug_print) {
  FLAMEFLEET_ASSIGN_OR_RETURN(ReplayPlan plan,
                              PrepareReplay(snapshot, max_cycles, max_memory_bytes));
  plan.options.debug_print = debug_print;
  ReplayHost host(&snapshot);
  FLAMEFLEET_ASSIGN_OR_RETURN(vm::RunResult result,
                              vm::RunProgram(plan.program, plan.inputs, plan.options, &host));
  FLAMEFLEET_RETURN_IF_ERROR(host.CheckFinished(result.cycles));
  return result;
}

}  // namespace flamefleet::runner

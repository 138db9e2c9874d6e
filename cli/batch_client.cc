#include "cli/batch_client.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "cli/program_flags.h"
#include "cli/project.h"
#include "cli/safe_paths.h"
#include "common/grpc_status.h"
#include "common/server.h"
#include "common/status_macros.h"
#include "common/toml.h"
#include "profile/folded.h"
#include "profile/profile_proto.h"
#include "renderer/profile_file.h"
#include "runner/batch_summary.h"
#include "runner/runner.h"
#include "vm/vm.h"

namespace flamefleet::cli {
namespace {

namespace fs = std::filesystem;

constexpr absl::Duration kRpcDeadline = absl::Seconds(60);
// The dialect of every Miden project (the project format is v0.25's).
constexpr vm::Dialect kProjectDialect = vm::Dialect::kV0_25;

absl::StatusOr<std::string> ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", p.string()));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void SetDeadline(grpc::ClientContext* ctx, absl::Duration d = kRpcDeadline) {
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + d));
}

bool Under(const fs::path& p, const std::vector<fs::path>& dirs) {
  for (const fs::path& d : dirs) {
    auto rel = p.lexically_relative(d);
    if (!rel.empty() && *rel.begin() != "..") return true;
  }
  return false;
}

// A job's kernel as JobSpec.kernel and .kernel_modules: the kernel module `kernel` and the
// submodules it declares (vm::Assembler::KernelFiles under `dialect`), each named by its path
// relative to `base`. InvalidArgument (file:line:col) for a kernel that does not parse or a
// declared submodule that is missing.
struct JobKernel {
  v1::LibraryFile root;
  std::vector<v1::LibraryFile> modules;
  std::vector<fs::path> files;  // every file, absolute and normal

  void SetOn(v1::JobSpec* job) const {
    *job->mutable_kernel() = root;
    for (const v1::LibraryFile& m : modules) *job->add_kernel_modules() = m;
  }
};

absl::StatusOr<JobKernel> LoadJobKernel(const fs::path& kernel, const fs::path& base,
                                        vm::Dialect dialect) {
  vm::AssemblerOptions options;
  options.dialect = dialect;
  options.kernel_path = fs::absolute(kernel).lexically_normal().string();
  absl::StatusOr<std::vector<vm::SourceText>> files = vm::Assembler(options).KernelFiles();
  if (!files.ok()) return absl::InvalidArgumentError(files.status().message());
  JobKernel out;
  for (size_t i = 0; i < files->size(); ++i) {
    const fs::path file = fs::path((*files)[i].path).lexically_normal();
    v1::LibraryFile lf;
    lf.set_path(file.lexically_relative(base).generic_string());
    lf.set_source(std::move((*files)[i].text));
    out.files.push_back(file);
    if (i == 0) {
      out.root = std::move(lf);
    } else {
      out.modules.push_back(std::move(lf));
    }
  }
  return out;
}

// Adds the job `name` read from `file` (and NAME.inputs / NAME.toml beside it). `suite` is the
// directory argument the file was found in (null for a file argument): then neither the program
// nor its inputs file may be a symlink out of it. `dialect` ("" = the batch's) is the suite
// manifest's.
absl::Status AddJob(const fs::path& file, const std::string& name, const fs::path* suite,
                    const std::string& dialect, v1::SubmitBatchRequest* req) {
  std::string inputs = DefaultInputsPath(file.string());
  if (suite != nullptr) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(file, *suite, "suite directory"));
    if (!inputs.empty()) {
      FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(inputs, *suite, "suite directory"));
    }
  }
  v1::JobSpec* job = req->add_jobs();
  job->set_name(name);
  job->set_dialect(dialect);
  FLAMEFLEET_ASSIGN_OR_RETURN(std::string source, ReadText(file));
  job->set_source(std::move(source));
  if (!inputs.empty()) {
    FLAMEFLEET_ASSIGN_OR_RETURN(std::string text, ReadText(inputs));
    job->set_inputs(std::move(text));
    job->set_inputs_format(absl::EndsWith(inputs, ".toml") ? v1::INPUTS_FORMAT_TOML
                                                           : v1::INPUTS_FORMAT_JSON);
  }
  return absl::OkStatus();
}

// A suite directory's manifest, DIR/flamefleet.toml (absent: no libraries, no dialect).
struct SuiteManifest {
  std::vector<std::string> libraries;  // NS=DIR values, as --lib would give them
  std::string dialect;                 // `dialect = "v0.16"`, canonical name; "" if unset
  std::vector<std::string> phases;     // [summary] phases: "START=END", as --phase gives them
  std::vector<std::string> markers;    // [summary] markers: prefixes, as --marker gives them
};

// Reads the manifest's [summary] table: `phases = ["a=b"]` and `markers = ["app::phase::"]`,
// lists of strings for every job's summary. `where` gives "FILE:LINE:COL: " of a node.
template <typename Where>
absl::Status ReadSummaryTable(const toml::node& value, const Where& where, SuiteManifest* out) {
  const toml::table* table = value.as_table();
  if (table == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        where(value), "summary: expected a table with phases = [\"START=END\"] and markers"));
  }
  for (const auto& [key, list] : *table) {
    const std::string name(key.str());
    if (name != "phases" && name != "markers") {
      return absl::InvalidArgumentError(absl::StrCat(where(list), "summary: unknown key '", name,
                                                     "' (the table has phases and markers)"));
    }
    const toml::array* array = list.as_array();
    if (array == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where(list), "summary.", name, ": expected a list of strings"));
    }
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::node& item = *array->get(i);
      const auto* text = item.as_string();
      const std::string field = absl::StrCat("summary.", name, "[", i, "]");
      if (text == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(where(list), field, ": expected a string"));
      }
      const std::string v(text->get());
      if (name == "phases") {
        absl::StatusOr<runner::PhasePair> pair = runner::ParsePhasePair(v);
        if (!pair.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where(list), field, ": ", pair.status().message()));
        }
        out->phases.push_back(v);
      } else {
        if (v.empty()) {
          return absl::InvalidArgumentError(
              absl::StrCat(where(list), field, ": empty (a marker prefix)"));
        }
        out->markers.push_back(v);
      }
    }
  }
  return absl::OkStatus();
}

// Appends `values` to `out`, skipping those already there.
void AppendNew(const std::vector<std::string>& values,
               google::protobuf::RepeatedPtrField<std::string>* out) {
  for (const std::string& v : values) {
    if (std::find(out->begin(), out->end(), v) == out->end()) *out->Add() = v;
  }
}

// Reads DIR/flamefleet.toml: its [libraries] table maps a namespace to a directory relative to
// DIR (`ex = "lib"`), `dialect` names the Miden dialect of the suite's programs, and the
// [summary] table lists phases and markers for every job's summary. Any other key is an error
// (a misspelt `dialect` must not silently run the suite under the default).
absl::StatusOr<SuiteManifest> ReadManifest(const fs::path& dir) {
  fs::path manifest = dir / "flamefleet.toml";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(manifest, ec))) return SuiteManifest{};
  FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(manifest, dir, "suite directory"));
  FLAMEFLEET_ASSIGN_OR_RETURN(std::string text, ReadText(manifest));
  toml::parse_result parsed = toml::parse(text, manifest.string());
  if (!parsed) {
    const auto& err = parsed.error();
    return absl::InvalidArgumentError(absl::StrCat(manifest.string(), ":", err.source().begin.line,
                                                   ":", err.source().begin.column, ": ",
                                                   std::string(err.description())));
  }
  // Returns "FILE:LINE:COL: " for `node`, or "FILE: " when it has no position.
  auto where = [&manifest](const toml::node& node) {
    const toml::source_position& at = node.source().begin;
    if (!at) return absl::StrCat(manifest.string(), ": ");
    return absl::StrCat(manifest.string(), ":", at.line, ":", at.column, ": ");
  };
  SuiteManifest out;
  for (const auto& [key, value] : parsed.table()) {
    const std::string name(key.str());
    if (name == "libraries") {
      const toml::table* table = value.as_table();
      if (table == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(value), "libraries: expected a table of NAMESPACE = \"DIR\""));
      }
      for (const auto& [ns, dir_value] : *table) {
        const auto* path = dir_value.as_string();
        if (path == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat(manifest.string(), ": libraries.",
                                                         std::string(ns.str()),
                                                         ": expected a directory string"));
        }
        out.libraries.push_back(
            absl::StrCat(std::string(ns.str()), "=",
                         (dir / std::string(path->get())).lexically_normal().string()));
      }
    } else if (name == "dialect") {
      const auto* dialect = value.as_string();
      if (dialect == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(where(value),
                                                       "dialect: expected a string such as \"",
                                                       vm::DialectName(vm::kDefaultDialect), "\""));
      }
      absl::StatusOr<vm::Dialect> known = vm::ParseDialect(std::string(dialect->get()));
      if (!known.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where(value), "dialect: ", known.status().message()));
      }
      out.dialect = std::string(vm::DialectName(*known));
    } else if (name == "summary") {
      FLAMEFLEET_RETURN_IF_ERROR(ReadSummaryTable(value, where, &out));
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat(where(value), "unknown key '", name,
                       "' (a suite manifest has [libraries], dialect and [summary])"));
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::SubmitBatchRequest> BuildSubmitRequest(const std::vector<std::string>& programs,
                                                          const std::vector<std::string>& libs,
                                                          const std::vector<std::string>& labels,
                                                          const std::vector<std::string>& snapshots,
                                                          const std::string& kernel,
                                                          vm::Dialect kernel_dialect) {
  v1::SubmitBatchRequest req;
  // --kernel: named relative to the directory above the kernel's ("kern/mod.masm").
  std::optional<JobKernel> program_kernel;
  if (!kernel.empty()) {
    const fs::path abs = fs::absolute(kernel).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(abs, ec)) {
      return absl::InvalidArgumentError(absl::StrCat("--kernel ", kernel, ": no such file"));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(
        program_kernel, LoadJobKernel(abs, abs.parent_path().parent_path(), kernel_dialect));
  }
  std::vector<std::string> all_libs = libs;
  absl::flat_hash_map<std::string, std::string> suite_dialects;  // directory argument -> dialect
  absl::flat_hash_map<std::string, Project> projects;            // directory argument -> project
  for (const std::string& arg : programs) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckAcceptedInput(arg));
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) continue;
    FLAMEFLEET_ASSIGN_OR_RETURN(SuiteManifest manifest, ReadManifest(arg));
    all_libs.insert(all_libs.end(), manifest.libraries.begin(), manifest.libraries.end());
    suite_dialects[arg] = manifest.dialect;
    AppendNew(manifest.phases, req.mutable_options()->mutable_phases());
    AppendNew(manifest.markers, req.mutable_options()->mutable_markers());
    if (!IsProjectDirectory(arg)) continue;
    if (!manifest.dialect.empty() && manifest.dialect != vm::DialectName(kProjectDialect)) {
      return absl::InvalidArgumentError(absl::StrCat(
          (fs::path(arg) / "flamefleet.toml").string(), ": dialect: a Miden project is always ",
          vm::DialectName(kProjectDialect), ", not ", manifest.dialect));
    }
    FLAMEFLEET_ASSIGN_OR_RETURN(Project project, LoadProject(arg));
    projects.emplace(arg, std::move(project));
  }
  // A project's dependency on miden-core is the core library, wherever --lib or the
  // environment puts it.
  const bool core_mapped = std::any_of(all_libs.begin(), all_libs.end(), [](const std::string& l) {
    return absl::StartsWith(l, absl::StrCat(kCoreNamespace, "="));
  });
  if (!core_mapped && std::any_of(projects.begin(), projects.end(),
                                  [](const auto& p) { return p.second.uses_core_library; })) {
    absl::StatusOr<std::string> core = LocateCoreLibrary(kProjectDialect);
    if (!core.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a project depends on ", kCorePackage, ", the core library: ", core.status().message()));
    }
    all_libs.push_back(absl::StrCat(kCoreNamespace, "=", *core));
  }
  FLAMEFLEET_ASSIGN_OR_RETURN(auto lib_pairs, ParseLibraryFlags(all_libs));
  absl::flat_hash_map<std::string, std::string> lib_namespaces;  // namespace -> where from
  std::vector<fs::path> lib_dirs;
  for (const auto& [ns, dir] : lib_pairs) {
    lib_namespaces.emplace(ns, absl::StrCat("--lib ", ns, "=", dir));
    fs::path root = fs::absolute(dir).lexically_normal();
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      return absl::InvalidArgumentError(absl::StrCat("--lib ", ns, "=", dir, ": not a directory"));
    }
    lib_dirs.push_back(root);
    v1::Library* lib = req.mutable_libraries()->add_libraries();
    lib->set_namespace_(ns);
    std::vector<fs::path> files;
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->path().extension() == ".masm") files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(f, root, "library directory"));
      v1::LibraryFile* lf = lib->add_files();
      lf->set_path(f.lexically_relative(root).string());
      FLAMEFLEET_ASSIGN_OR_RETURN(std::string source, ReadText(f));
      lf->set_source(std::move(source));
    }
  }
  for (const auto& [arg, project] : projects) {
    for (const ProjectLibrary& library : project.libraries) {
      if (auto [it, fresh] = lib_namespaces.emplace(library.ns, library.manifest.string());
          !fresh) {
        return absl::InvalidArgumentError(
            absl::StrCat(library.manifest.string(), ": the lib of package '", library.package,
                         "' has namespace '", library.ns, "', which ", it->second, " also has"));
      }
      v1::Library* lib = req.mutable_libraries()->add_libraries();
      lib->set_namespace_(library.ns);
      for (const std::string& ns : library.static_links) lib->add_static_links(ns);
      for (const auto& [path, file] : library.files) {
        v1::LibraryFile* lf = lib->add_files();
        lf->set_path(path);
        FLAMEFLEET_ASSIGN_OR_RETURN(std::string source, ReadText(file));
        lf->set_source(std::move(source));
      }
    }
  }
  absl::flat_hash_set<std::string> names;
  for (const std::string& arg : programs) {
    if (auto project = projects.find(arg); project != projects.end()) {
      for (const ProjectBin& bin : project->second.bins) {
        if (!names.insert(bin.job_name).second) {
          return absl::InvalidArgumentError(absl::StrCat(
              "two programs are both named '", bin.job_name, "'; pass them in separate batches"));
        }
        v1::JobSpec* job = req.add_jobs();
        job->set_name(bin.job_name);
        job->set_dialect(std::string(vm::DialectName(kProjectDialect)));
        for (const std::string& ns : bin.static_libraries) job->add_static_libraries(ns);
        FLAMEFLEET_ASSIGN_OR_RETURN(std::string source, ReadText(bin.file));
        job->set_source(std::move(source));
        if (!bin.kernel.empty()) {
          // Named by their paths in the project, as error locations show them.
          FLAMEFLEET_ASSIGN_OR_RETURN(
              JobKernel kernel,
              LoadJobKernel(bin.kernel, fs::absolute(arg).lexically_normal(), kProjectDialect));
          for (const fs::path& file : kernel.files) {
            FLAMEFLEET_RETURN_IF_ERROR(CheckInsideDirectory(file, arg, "project directory"));
          }
          kernel.SetOn(job);
        }
        if (!bin.inputs.empty()) {
          FLAMEFLEET_ASSIGN_OR_RETURN(std::string text, ReadText(bin.inputs));
          job->set_inputs(std::move(text));
          job->set_inputs_format(bin.inputs.extension() == ".toml" ? v1::INPUTS_FORMAT_TOML
                                                                   : v1::INPUTS_FORMAT_JSON);
        }
      }
      continue;
    }
    fs::path p = fs::absolute(arg).lexically_normal();
    std::error_code ec;
    std::vector<std::pair<fs::path, std::string>> found;
    const bool suite = fs::is_directory(p, ec);
    if (suite) {
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->path().extension() != ".masm" || Under(it->path(), lib_dirs)) continue;
        // The kernel's own files are not programs of the suite.
        if (program_kernel.has_value() &&
            std::find(program_kernel->files.begin(), program_kernel->files.end(),
                      it->path().lexically_normal()) != program_kernel->files.end()) {
          continue;
        }
        found.emplace_back(it->path(), it->path().lexically_relative(p).string());
      }
      std::sort(found.begin(), found.end());
    } else if (fs::is_regular_file(p, ec)) {
      found.emplace_back(p, p.filename().string());
    } else {
      return absl::InvalidArgumentError(absl::StrCat(arg, ": no such file or directory"));
    }
    for (const auto& [file, name] : found) {
      if (!names.insert(name).second) {
        return absl::InvalidArgumentError(absl::StrCat("two programs are both named '", name,
                                                       "'; pass their parent directory instead"));
      }
      FLAMEFLEET_RETURN_IF_ERROR(
          AddJob(file, name, suite ? &p : nullptr, suite ? suite_dialects[arg] : "", &req));
      if (program_kernel.has_value()) program_kernel->SetOn(req.mutable_jobs(req.jobs_size() - 1));
    }
  }
  for (const std::string& arg : snapshots) {
    FLAMEFLEET_RETURN_IF_ERROR(CheckAcceptedInput(arg));
    std::string name = fs::path(arg).filename().string();
    if (!names.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("two jobs are both named '", name, "'; rename one of the snapshots"));
    }
    absl::StatusOr<v1::ReplaySnapshot> snapshot = runner::LoadSnapshotFile(arg);
    if (!snapshot.ok()) return absl::InvalidArgumentError(snapshot.status().message());
    FLAMEFLEET_ASSIGN_OR_RETURN(std::string bytes, ReadText(arg));
    // A snapshot runs under the dialect it was recorded in, whatever --dialect says.
    FLAMEFLEET_ASSIGN_OR_RETURN(const vm::Dialect recorded, runner::SnapshotDialect(*snapshot));
    v1::JobSpec* job = req.add_jobs();
    job->set_name(std::move(name));
    job->set_snapshot(std::move(bytes));
    job->set_dialect(std::string(vm::DialectName(recorded)));
  }
  if (req.jobs_size() == 0) {
    return absl::InvalidArgumentError("no .masm programs or snapshots found");
  }
  for (const std::string& l : labels) {
    size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat("--label '", l, "': expected KEY=VALUE"));
    }
    (*req.mutable_labels())[l.substr(0, eq)] = l.substr(eq + 1);
  }
  return req;
}

BatchClient::BatchClient(std::shared_ptr<grpc::Channel> channel)
    : stub_(v1::Coordinator::NewStub(channel)) {}

absl::StatusOr<std::string> BatchClient::Submit(const v1::SubmitBatchRequest& request) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  v1::SubmitBatchResponse resp;
  FLAMEFLEET_RETURN_IF_ERROR(FromGrpcStatus(stub_->SubmitBatch(&ctx, request, &resp)));
  return resp.batch_id();
}

absl::StatusOr<v1::Batch> BatchClient::Get(const std::string& batch_id) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  v1::GetBatchRequest req;
  req.set_batch_id(batch_id);
  v1::Batch batch;
  FLAMEFLEET_RETURN_IF_ERROR(FromGrpcStatus(stub_->GetBatch(&ctx, req, &batch)));
  return batch;
}

absl::StatusOr<std::vector<v1::Batch>> BatchClient::List(const v1::ListBatchesRequest& request) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  v1::ListBatchesResponse resp;
  FLAMEFLEET_RETURN_IF_ERROR(FromGrpcStatus(stub_->ListBatches(&ctx, request, &resp)));
  return std::vector<v1::Batch>(resp.batches().begin(), resp.batches().end());
}

absl::StatusOr<v1::Batch> BatchClient::Cancel(const std::string& batch_id) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx);
  v1::CancelBatchRequest req;
  req.set_batch_id(batch_id);
  v1::Batch batch;
  FLAMEFLEET_RETURN_IF_ERROR(FromGrpcStatus(stub_->CancelBatch(&ctx, req, &batch)));
  return batch;
}

absl::StatusOr<v1::Batch> BatchClient::Watch(const std::string& batch_id,
                                             const std::function<void(const v1::Batch&)>& on_update,
                                             const WatchRetry& retry) {
  v1::WatchBatchRequest req;
  req.set_batch_id(batch_id);
  v1::Batch last;
  bool any = false;
  std::optional<absl::Time> outage_start;  // since when no stream has worked
  absl::Duration backoff = absl::Milliseconds(100);
  while (true) {
    grpc::ClientContext ctx;  // no deadline: a batch may run for hours
    auto reader = stub_->WatchBatch(&ctx, req);
    v1::Batch batch;
    while (reader->Read(&batch)) {
      on_update(batch);
      last = batch;
      any = true;
      outage_start.reset();
      backoff = absl::Milliseconds(100);
    }
    absl::Status status = FromGrpcStatus(reader->Finish());
    const bool ended = any && last.state() != v1::BATCH_STATE_RUNNING &&
                       last.state() != v1::BATCH_STATE_UNSPECIFIED;
    if (status.ok() && ended) return last;
    if (status.ok()) {
      status = absl::UnavailableError("the watch stream ended before the batch did");
    }
    if (!absl::IsUnavailable(status) || retry.reconnect_for <= absl::ZeroDuration()) {
      return status;
    }
    const absl::Time now = absl::Now();
    if (!outage_start.has_value()) outage_start = now;
    const absl::Duration left = *outage_start + retry.reconnect_for - now;
    if (left <= absl::ZeroDuration()) {
      return absl::UnavailableError(absl::StrCat(
          "batch ", batch_id, ": gave up reconnecting to the coordinator after ",
          absl::FormatDuration(retry.reconnect_for), " (--reconnect-for): ", status.message()));
    }
    const absl::Duration wait = std::min(backoff, left);
    if (retry.on_reconnect) retry.on_reconnect(status, wait);
    absl::SleepFor(wait);
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
}

absl::StatusOr<std::string> BatchClient::Fetch(const std::string& batch_id,
                                               const std::string& job_name,
                                               v1::ArtifactFormat format, v1::AggregateView view) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, absl::Minutes(10));
  v1::FetchArtifactRequest req;
  req.set_batch_id(batch_id);
  req.set_job_name(job_name);
  req.set_format(format);
  req.set_view(view);
  auto reader = stub_->FetchArtifact(&ctx, req);
  v1::ArtifactChunk chunk;
  std::string data;
  while (reader->Read(&chunk)) data += chunk.data();
  FLAMEFLEET_RETURN_IF_ERROR(FromGrpcStatus(reader->Finish()));
  return data;
}

absl::StatusOr<BatchClient::Aggregated> BatchClient::Aggregate(
    const v1::AggregateRequest& request) {
  grpc::ClientContext ctx;
  SetDeadline(&ctx, absl::Minutes(10));
  auto reader = stub_->Aggregate(&ctx, request);
  Aggregated out;
  v1::AggregateChunk chunk;
  bool have_header = false;
  while (reader->Read(&chunk)) {
    if (chunk.has_header()) {
      out.header = chunk.header();
      have_header = true;
    } else {
      out.data += chunk.data();
    }
  }
  FLAMEFLEET_RETURN_IF_ERROR(FromGrpcStatus(reader->Finish()));
  if (!have_header || out.data.size() != out.header.bytes()) {
    return absl::DataLossError("the aggregate arrived incomplete");
  }
  return out;
}

absl::StatusOr<profile::Profile> BatchClient::FetchProfile(const std::string& batch_id,
                                                           const std::string& job_name,
                                                           v1::AggregateView view) {
  absl::StatusOr<std::string> bytes = Fetch(batch_id, job_name, v1::ARTIFACT_FORMAT_PROFILE, view);
  if (bytes.ok()) return profile::ParseProfile(*bytes);
  if (!absl::IsNotFound(bytes.status()) && !absl::IsInvalidArgument(bytes.status()) &&
      !absl::IsUnimplemented(bytes.status())) {
    return bytes.status();
  }
  // An older coordinator, or one that keeps only rendered artifacts: parse the folded stacks.
  FLAMEFLEET_ASSIGN_OR_RETURN(std::string folded,
                              Fetch(batch_id, job_name, v1::ARTIFACT_FORMAT_FOLDED, view));
  profile::Profile p;
  profile::FoldedReader reader(&p);
  FLAMEFLEET_RETURN_IF_ERROR(
      reader.ReadString(folded, job_name.empty() ? "aggregate.folded" : job_name));
  return p;
}

absl::Status BatchClient::FetchAll(const std::string& batch_id, const std::string& dir,
                                   const std::vector<profile::ProfileFormat>& formats) {
  const std::vector<profile::ProfileFormat> wanted =
      formats.empty() ? std::vector<profile::ProfileFormat>{profile::ProfileFormat::kSvg,
                                                            profile::ProfileFormat::kFolded}
                      : formats;
  FLAMEFLEET_ASSIGN_OR_RETURN(v1::Batch batch, Get(batch_id));
  // Every output path is checked before anything is written: job names come from the
  // coordinator, and one hostile name refuses the whole fetch (nothing is written).
  struct Output {
    std::string job;  // "" = the aggregate (in `view`)
    v1::AggregateView view;
    std::string title;
    std::vector<fs::path> paths;  // one per format in `wanted`
  };
  std::vector<Output> outputs;
  std::vector<std::string> refused;
  auto plan = [&](const std::string& job, v1::AggregateView view, std::string title,
                  const std::string& prefix, const std::string& base) {
    Output out{job, view, std::move(title), {}};
    for (profile::ProfileFormat format : wanted) {
      absl::StatusOr<fs::path> path =
          ServerNamedPath(dir, absl::StrCat(base, profile::ProfileFormatSuffix(format)), prefix);
      if (!path.ok()) {
        refused.push_back(
            absl::StrCat("job \"", absl::CHexEscape(job), "\": ", path.status().message()));
        return;
      }
      out.paths.push_back(*std::move(path));
    }
    outputs.push_back(std::move(out));
  };
  if (batch.jobs_succeeded() > 0) {
    plan("", v1::AGGREGATE_VIEW_MERGED, absl::StrCat("batch ", batch_id, " aggregate"), "",
         "aggregate");
    plan("", v1::AGGREGATE_VIEW_BY_JOB, absl::StrCat("batch ", batch_id, " aggregate by job"), "",
         "aggregate-by-job");
  }
  for (const v1::JobStatus& job : batch.jobs()) {
    if (job.state() != v1::JOB_STATE_SUCCEEDED) continue;
    plan(job.name(), v1::AGGREGATE_VIEW_MERGED, job.name(), "jobs/", job.name());
  }
  absl::StatusOr<fs::path> summary_path = ServerNamedPath(dir, "summary.json");
  if (!summary_path.ok()) refused.push_back(std::string(summary_path.status().message()));
  if (!refused.empty()) {
    constexpr size_t kShown = 5;
    const size_t more = refused.size() > kShown ? refused.size() - kShown : 0;
    refused.resize(std::min(refused.size(), kShown));
    return absl::InvalidArgumentError(absl::StrCat(
        "batch ", batch_id, ": the coordinator named ", refused.size() + more,
        " job(s) with unsafe paths; nothing was written: ", absl::StrJoin(refused, "; "),
        more > 0 ? absl::StrCat("; and ", more, " more") : ""));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("mkdir ", dir, ": ", ec.message()));
  for (const Output& out : outputs) {
    std::optional<profile::Profile> p;  // fetched once for all converted formats
    for (size_t i = 0; i < wanted.size(); ++i) {
      const profile::ProfileFormat format = wanted[i];
      const fs::path& path = out.paths[i];
      std::string data;
      if (format == profile::ProfileFormat::kSvg) {
        FLAMEFLEET_ASSIGN_OR_RETURN(data,
                                    Fetch(batch_id, out.job, v1::ARTIFACT_FORMAT_SVG, out.view));
      } else if (format == profile::ProfileFormat::kFolded) {
        FLAMEFLEET_ASSIGN_OR_RETURN(data,
                                    Fetch(batch_id, out.job, v1::ARTIFACT_FORMAT_FOLDED, out.view));
      } else {
        if (!p.has_value()) {
          FLAMEFLEET_ASSIGN_OR_RETURN(p, FetchProfile(batch_id, out.job, out.view));
        }
        renderer::RenderOptions options;
        options.title = out.title;
        FLAMEFLEET_ASSIGN_OR_RETURN(data, renderer::EncodeProfile(*p, {format, false}, options));
      }
      fs::create_directories(path.parent_path(), ec);
      if (ec) {
        return absl::InternalError(
            absl::StrCat("mkdir ", path.parent_path().string(), ": ", ec.message()));
      }
      FLAMEFLEET_RETURN_IF_ERROR(WriteFileAtomically(path.string(), data));
    }
  }
  absl::StatusOr<std::string> summary = FetchBatchSummaryJson(batch_id);
  // A coordinator that predates summaries: no summary.json then.
  if (absl::IsUnimplemented(summary.status())) return absl::OkStatus();
  FLAMEFLEET_RETURN_IF_ERROR(summary.status());
  return WriteFileAtomically(summary_path->string(), *summary);
}

absl::StatusOr<std::string> BatchClient::FetchBatchSummaryJson(const std::string& batch_id) {
  absl::StatusOr<std::string> fetched = Fetch(batch_id, "", v1::ARTIFACT_FORMAT_SUMMARY);
  // A coordinator that predates summaries does not know the format.
  if (absl::IsInvalidArgument(fetched.status()) &&
      absl::StartsWith(fetched.status().message(), "format: unknown value")) {
    return absl::UnimplementedError(absl::StrCat(
        "batch ", batch_id, ": the coordinator serves no summaries (it predates them)"));
  }
  FLAMEFLEET_RETURN_IF_ERROR(fetched.status());
  return runner::BatchSummaryJsonFromWire(batch_id, *fetched);
}

std::string ProgressLine(const v1::Batch& b, int width) {
  uint32_t done = b.jobs_succeeded() + b.jobs_failed() + b.jobs_cancelled();
  int filled =
      b.jobs_total() == 0 ? width : static_cast<int>(int64_t{width} * done / b.jobs_total());
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(width - filled), '-');
  return absl::StrCat("[", bar, "] ", done, "/", b.jobs_total(), "  ", b.jobs_succeeded(), " ok  ",
                      b.jobs_failed(), " failed  ", b.jobs_running(), " running");
}

bool ProgressThrottle::ShouldPrint(const v1::Batch& b, absl::Time now) {
  const uint64_t done = uint64_t{b.jobs_succeeded()} + b.jobs_failed() + b.jobs_cancelled();
  const uint64_t tenth = b.jobs_total() == 0 ? 10 : done * 10 / b.jobs_total();
  const bool ended =
      b.state() != v1::BATCH_STATE_RUNNING && b.state() != v1::BATCH_STATE_UNSPECIFIED;
  const bool print = !printed_ || ended || tenth > last_tenth_ || now - last_ >= absl::Seconds(1);
  if (print) {
    printed_ = true;
    last_ = now;
    last_tenth_ = tenth;
  }
  return print;
}

}  // namespace flamefleet::cli

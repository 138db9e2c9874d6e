// The CLI's client of the coordinator: builds SubmitBatch requests from files on disk (programs,
// inputs files beside them, library directories) and wraps the Coordinator RPCs with deadlines.
// Shared by `submit`, `status`, `list`, `watch`, `cancel`, `fetch` and `run`.
//
//   BatchClient client(MakeChannel("127.0.0.1:7000"));
//   FLAMEFLEET_ASSIGN_OR_RETURN(auto request, BuildSubmitRequest({"examples/"}, {}, {}));
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::string id, client.Submit(request));
#ifndef FLAMEFLEET_CLI_BATCH_CLIENT_H_
#define FLAMEFLEET_CLI_BATCH_CLIENT_H_

#include <grpcpp/channel.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "flamefleet/v1/coordinator.grpc.pb.h"
#include "profile/export.h"
#include "profile/profile.h"
#include "vm/dialect.h"

namespace flamefleet::cli {

// Builds a batch from PROGRAMS (.masm files, or directories searched recursively; files inside a
// library directory are skipped). Job names are paths relative to the argument (a file argument
// gives its file name). NAME.inputs / NAME.toml beside a program become its inputs. `libs` are
// NS=DIR values; every .masm under DIR is sent once in the batch's library set. A directory
// argument may carry a suite manifest, DIR/flamefleet.toml, whose [libraries] table adds
// libraries relative to DIR (`ex = "lib"`) and whose [summary] table (`phases = ["a=b"]`,
// `markers = ["app::phase::"]`) adds phases and markers to the batch's options (InvalidArgument
// naming the key for a bad value). A program, inputs file or manifest found in a
// directory argument, and every library file, must not be a symlink that leaves that directory
// (or the library directory): InvalidArgument naming the link and its target (symlinks that
// stay inside are read like files).
// A directory argument holding miden-project.toml is a Miden project or workspace (cli/project.h):
// its jobs are its [[bin]] targets, named `bin` (`member/bin` in a workspace), under the v0.25
// dialect, with inputs from NAME.inputs / NAME.toml or inputs.toml (LoadProject); every package's
// [lib] joins the library set, and a dependency on miden-core adds the core library (--lib
// miden::core=DIR, else $MIDEN_CORE_LIB or the cargo registry; InvalidArgument if not found).
// A bin with a kernel sends its kernel module and submodules with the job (JobSpec.kernel,
// .kernel_modules).
// .masp and .mdsnap files are refused (CheckAcceptedInput).
// `snapshots` are replay snapshot files (flamefleet record): each becomes a job named by its
// file name that carries the file's bytes (checked locally first), so workers need no files.
// `kernel` (--kernel, "" for none) is the kernel of every program job that is not a project's
// bin: the kernel module and the submodules it declares under `kernel_dialect` (the --dialect;
// vm::Assembler::KernelFiles), named by their paths below the kernel's parent directory
// ("kern/mod.masm", "kern/sys.masm"); those files are not jobs of a suite they sit in.
// InvalidArgument for missing paths, unreadable snapshots, duplicate job names, or no jobs.
absl::StatusOr<v1::SubmitBatchRequest> BuildSubmitRequest(
    const std::vector<std::string>& programs, const std::vector<std::string>& libs,
    const std::vector<std::string>& labels, const std::vector<std::string>& snapshots = {},
    const std::string& kernel = "", vm::Dialect kernel_dialect = vm::kDefaultDialect);

// Default of `flamefleet watch --reconnect-for`: how long a watch keeps reconnecting to a
// coordinator that went away before it gives up.
inline constexpr absl::Duration kDefaultWatchReconnectFor = absl::Seconds(60);

class BatchClient {
 public:
  explicit BatchClient(std::shared_ptr<grpc::Channel> channel);

  absl::StatusOr<std::string> Submit(const v1::SubmitBatchRequest& request);
  absl::StatusOr<v1::Batch> Get(const std::string& batch_id);
  absl::StatusOr<std::vector<v1::Batch>> List(const v1::ListBatchesRequest& request);
  absl::StatusOr<v1::Batch> Cancel(const std::string& batch_id);
  // How Watch rides out a coordinator restart.
  struct WatchRetry {
    // Total time without a working stream after which Watch gives up (zero, the library
    // default: never reconnect; `flamefleet watch` uses kDefaultWatchReconnectFor). The
    // backoff between attempts starts at 100 ms and doubles to 5 s.
    absl::Duration reconnect_for = absl::ZeroDuration();
    // Called before each reconnect attempt with the error and the wait (may be empty).
    std::function<void(const absl::Status&, absl::Duration)> on_reconnect;
  };
  // Calls `on_update` for every progress event until the batch ends; returns the final state.
  // When the stream breaks with UNAVAILABLE (coordinator restarted or unreachable) or ends
  // before the batch did, it reconnects with backoff and resumes (the first event after a
  // reconnect is the current state) for up to retry.reconnect_for in total without a stream;
  // then Unavailable naming the limit. Other errors are returned as the RPC gave them.
  absl::StatusOr<v1::Batch> Watch(const std::string& batch_id,
                                  const std::function<void(const v1::Batch&)>& on_update,
                                  const WatchRetry& retry);
  absl::StatusOr<v1::Batch> Watch(const std::string& batch_id,
                                  const std::function<void(const v1::Batch&)>& on_update) {
    return Watch(batch_id, on_update, WatchRetry{});
  }
  // Fetches an artifact (job_name empty = the aggregate, in `view`) into memory.
  absl::StatusOr<std::string> Fetch(const std::string& batch_id, const std::string& job_name,
                                    v1::ArtifactFormat format,
                                    v1::AggregateView view = v1::AGGREGATE_VIEW_MERGED);
  // Merges every matching ended batch on the coordinator (Aggregate RPC); returns what was
  // merged and the artifact in request.format().
  struct Aggregated {
    v1::AggregateHeader header;
    std::string data;
  };
  absl::StatusOr<Aggregated> Aggregate(const v1::AggregateRequest& request);
  // Fetches the profile of a job (job_name empty = the aggregate): the PROFILE artifact, or,
  // if the coordinator has none (NotFound, InvalidArgument or Unimplemented), its folded
  // stacks parsed locally. Other errors are returned as the RPC gave them.
  absl::StatusOr<profile::Profile> FetchProfile(const std::string& batch_id,
                                                const std::string& job_name,
                                                v1::AggregateView view = v1::AGGREGATE_VIEW_MERGED);
  // Writes the aggregate, the by-job aggregate and every succeeded job of the batch into `dir`,
  // as aggregate<suffix>, aggregate-by-job<suffix> and jobs/<name><suffix> for each of `formats`
  // (suffixes as profile::ProfileFormatSuffix: .svg, .folded, .pb.gz, .speedscope.json). Empty
  // `formats` means {kSvg, kFolded}. SVG and folded are the coordinator's artifacts; pprof and
  // speedscope are converted here from FetchProfile's profile. Files are written atomically. Job
  // names come from the coordinator and are not trusted: every path is checked first with
  // ServerNamedPath (cli/safe_paths.h), and if any job's path is unsafe (absolute, "..", NUL,
  // backslash, or leaving `dir` through a symlink) the whole fetch is refused with
  // InvalidArgument naming the job(s) and why, before anything is written. Then writes the
  // batch's summary.json (FetchBatchSummaryJson; not from a coordinator that predates
  // summaries). Otherwise returns the first RPC or file error.
  absl::Status FetchAll(const std::string& batch_id, const std::string& dir,
                        const std::vector<profile::ProfileFormat>& formats = {});
  // Returns the batch's summary.json (schema "flamefleet.batch-summary/1", docs/summary.md):
  // every job's summary (each checked by runner::DecodeJobSummary; InvalidArgument naming the
  // job if one fails), the jobs without one, and the batch's totals. Works while the batch
  // runs. NotFound for an unknown batch; Unimplemented from a coordinator that predates
  // summaries (it answers "format: unknown value"); other RPC errors as the coordinator gave them.
  absl::StatusOr<std::string> FetchBatchSummaryJson(const std::string& batch_id);

 private:
  std::unique_ptr<v1::Coordinator::Stub> stub_;
};

// Returns a one-line progress summary: "[#####-----] 12/50  10 ok  2 failed  3 running".
std::string ProgressLine(const v1::Batch& batch, int width = 30);

// Which progress updates a log that is not a terminal (CI) gets, where every line stays: the
// first, the one that ends the batch, and otherwise one when a second has passed since the last
// line or the batch has crossed another tenth of its jobs done; never one per update.
//
//   ProgressThrottle throttle;
//   if (throttle.ShouldPrint(batch, absl::Now())) std::cerr << ProgressLine(batch) << "\n";
class ProgressThrottle {
 public:
  bool ShouldPrint(const v1::Batch& batch, absl::Time now);

 private:
  bool printed_ = false;
  absl::Time last_ = absl::InfinitePast();
  uint64_t last_tenth_ = 0;
};

}  // namespace flamefleet::cli

#endif  // FLAMEFLEET_CLI_BATCH_CLIENT_H_

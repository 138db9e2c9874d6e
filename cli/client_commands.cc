#include "cli/client_commands.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "cli/batch_client.h"
#include "cli/command.h"
#include "cli/local_fleet.h"
#include "cli/program_flags.h"
#include "common/channel.h"
#include "common/grpc_status.h"
#include "common/security.h"
#include "common/status_macros.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "profile/export.h"
#include "profile/profile_proto.h"
#include "renderer/profile_file.h"
#include "runner/runner.h"

namespace flamefleet::cli {
namespace {

std::string StateName(v1::BatchState s) {
  switch (s) {
    case v1::BATCH_STATE_RUNNING:
      return "RUNNING";
    case v1::BATCH_STATE_SUCCEEDED:
      return "SUCCEEDED";
    case v1::BATCH_STATE_FAILED:
      return "FAILED";
    case v1::BATCH_STATE_CANCELLED:
      return "CANCELLED";
    default:
      return "UNSPECIFIED";
  }
}

std::string JobStateName(v1::JobState s) {
  switch (s) {
    case v1::JOB_STATE_QUEUED:
      return "QUEUED";
    case v1::JOB_STATE_RUNNING:
      return "RUNNING";
    case v1::JOB_STATE_SUCCEEDED:
      return "SUCCEEDED";
    case v1::JOB_STATE_FAILED:
      return "FAILED";
    case v1::JOB_STATE_CANCELLED:
      return "CANCELLED";
    default:
      return "UNSPECIFIED";
  }
}

std::optional<v1::BatchState> ParseBatchState(const std::string& s) {
  for (auto st : {v1::BATCH_STATE_RUNNING, v1::BATCH_STATE_SUCCEEDED, v1::BATCH_STATE_FAILED,
                  v1::BATCH_STATE_CANCELLED}) {
    if (absl::AsciiStrToUpper(s) == StateName(st)) return st;
  }
  return std::nullopt;
}

// The `n` frames with the most self cycles in `p` (a procedure's self cycles summed over every
// stack it ends), most expensive first; ties by name.
std::vector<std::pair<std::string, uint64_t>> TopSelfFrames(const profile::Profile& p, size_t n) {
  std::vector<uint64_t> self(p.num_frames(), 0);
  for (profile::Profile::NodeId node = 1; node < p.num_nodes(); ++node) {  // 0: the root
    self[p.frame(node)] += p.self(node);
  }
  std::vector<std::pair<std::string, uint64_t>> top;
  for (profile::Profile::FrameId f = 0; f < self.size(); ++f) {
    if (self[f] > 0) top.emplace_back(std::string(p.frame_name(f)), self[f]);
  }
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (top.size() > n) top.resize(n);
  return top;
}

// The batch's five most expensive procedures by self cycles over all its jobs, from the
// aggregate; empty while the batch runs or when it has no aggregate.
std::vector<std::pair<std::string, uint64_t>> TopProcedures(BatchClient& client,
                                                            const v1::Batch& b) {
  if (b.state() != v1::BATCH_STATE_SUCCEEDED && b.state() != v1::BATCH_STATE_FAILED) return {};
  if (b.jobs_succeeded() == 0) return {};
  absl::StatusOr<profile::Profile> aggregate = client.FetchProfile(b.batch_id(), "");
  if (!aggregate.ok()) return {};
  return TopSelfFrames(*aggregate, 5);
}

nlohmann::json BatchJson(const v1::Batch& b, bool with_jobs) {
  nlohmann::json j;
  j["batch_id"] = b.batch_id();
  j["state"] = StateName(b.state());
  j["labels"] = nlohmann::json::object();
  for (const auto& [k, v] : b.labels()) j["labels"][k] = v;
  j["created_unix_ms"] = b.created_unix_ms();
  j["jobs"] = {{"total", b.jobs_total()},     {"queued", b.jobs_queued()},
               {"running", b.jobs_running()}, {"succeeded", b.jobs_succeeded()},
               {"failed", b.jobs_failed()},   {"cancelled", b.jobs_cancelled()}};
  j["aggregate_cycles"] = b.aggregate_cycles();
  if (with_jobs) {
    j["job_status"] = nlohmann::json::array();
    for (const v1::JobStatus& job : b.jobs()) {
      nlohmann::json jj = {{"name", job.name()},
                           {"state", JobStateName(job.state())},
                           {"attempts", job.attempts()},
                           {"cycles", job.cycles()}};
      if (!job.error().empty()) jj["error"] = job.error();
      if (!job.cached_from().empty()) jj["cached_from"] = job.cached_from();
      j["job_status"].push_back(jj);
    }
  }
  return j;
}

void PrintBatch(const v1::Batch& b) {
  std::cout << "batch " << b.batch_id() << "  " << StateName(b.state()) << "\n";
  if (!b.labels().empty()) {
    std::vector<std::string> labels;
    for (const auto& [k, v] : b.labels()) labels.push_back(absl::StrCat(k, "=", v));
    std::sort(labels.begin(), labels.end());
    std::cout << "labels: " << absl::StrJoin(labels, " ") << "\n";
  }
  std::cout << "jobs: " << b.jobs_total() << " total, " << b.jobs_queued() << " queued, "
            << b.jobs_running() << " running, " << b.jobs_succeeded() << " succeeded, "
            << b.jobs_failed() << " failed, " << b.jobs_cancelled() << " cancelled\n";
  std::cout << "aggregate cycles: " << b.aggregate_cycles() << "\n";
  for (const v1::JobStatus& job : b.jobs()) {
    std::cout << "  " << JobStateName(job.state()) << "  " << job.name();
    if (job.state() == v1::JOB_STATE_SUCCEEDED) std::cout << "  " << job.cycles() << " cycles";
    if (job.attempts() > 1) std::cout << "  (" << job.attempts() << " attempts)";
    if (!job.cached_from().empty()) std::cout << "  (cached from " << job.cached_from() << ")";
    std::cout << "\n";
    if (!job.error().empty()) std::cout << "      " << job.error() << "\n";
  }
}

// Follows a batch with a live progress line on stderr (redrawn on a terminal; otherwise lines as
// ProgressThrottle allows); returns the final batch. A broken stream is reconnected for up to
// `reconnect_for` (zero: not at all), saying so on stderr.
absl::StatusOr<v1::Batch> WatchWithProgress(BatchClient& client, const std::string& id,
                                            absl::Duration reconnect_for) {
  absl::Time start = absl::Now();
  const bool tty = isatty(STDERR_FILENO);
  ProgressThrottle throttle;
  BatchClient::WatchRetry retry;
  retry.reconnect_for = reconnect_for;
  retry.on_reconnect = [&](const absl::Status& why, absl::Duration wait) {
    std::cerr << (tty ? "\r\033[K" : "") << "coordinator unavailable (" << why.message()
              << "); reconnecting in " << absl::FormatDuration(wait) << " (up to "
              << absl::FormatDuration(reconnect_for) << " in total, --reconnect-for)\n";
  };
  auto result = client.Watch(
      id,
      [&](const v1::Batch& b) {
        if (!tty && !throttle.ShouldPrint(b, absl::Now())) return;
        uint32_t done = b.jobs_succeeded() + b.jobs_failed() + b.jobs_cancelled();
        std::string eta;
        if (done > 0 && done < b.jobs_total()) {
          absl::Duration left = (absl::Now() - start) / done * (b.jobs_total() - done);
          eta = left < absl::Seconds(1)
                    ? "  ETA <1s"
                    : absl::StrCat("  ETA ",
                                   absl::FormatDuration(absl::Trunc(left, absl::Seconds(1))));
        }
        std::cerr << (tty ? "\r" : "") << ProgressLine(b) << eta << (tty ? "\033[K" : "\n");
      },
      retry);
  if (tty) std::cerr << "\n";
  return result;
}

// Exits 0 only if every job of the batch succeeded (watch, run).
ExitCode ExitFor(const v1::Batch& b) {
  return ExitCode{b.state() == v1::BATCH_STATE_SUCCEEDED ? kExitOk : kExitFailed};
}

// Makes `command` the callback of the fleet command `cmd`. The fleet commands exit 2 for every
// InvalidArgument: a bad flag, or a request the coordinator refused as invalid.
void SetFleetCommand(CLI::App* cmd, int* exit_code, std::function<CommandResult()> command) {
  SetCommand(cmd, exit_code, [command = std::move(command)]() -> CommandResult {
    CommandResult result = command();
    if (absl::IsInvalidArgument(result.status())) return UsageError(result.status());
    return result;
  });
}

struct SubmitFlags {
  explicit SubmitFlags(ProgramCommand command) : program(command) {}

  ProgramFlags program;
  std::vector<std::string> labels;
  uint32_t deadline_ms = 0;
  bool flat = false;
  bool no_cache = false;
  std::string title;
  std::vector<std::string> phases;   // --phase START=END
  std::vector<std::string> markers;  // --marker PREFIX
};

// Parses repeated KEY=VALUE --label flags into `labels`.
absl::Status ParseLabels(const std::vector<std::string>& flags,
                         google::protobuf::Map<std::string, std::string>* labels) {
  for (const std::string& l : flags) {
    size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat("--label expects KEY=VALUE, got \"", l, "\""));
    }
    (*labels)[l.substr(0, eq)] = l.substr(eq + 1);
  }
  return absl::OkStatus();
}

// Parses --since DURATION ("24h", "90m") into a Unix time in ms (0 for an empty flag).
absl::StatusOr<int64_t> ParseSince(const std::string& flag) {
  if (flag.empty()) return 0;
  absl::Duration since;
  if (!absl::ParseDuration(flag, &since) || since < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--since: expected a duration like 24h");
  }
  return absl::ToUnixMillis(absl::Now() - since);
}

void AddSubmitOptions(CLI::App* cmd, SubmitFlags* f) {
  f->program.Add(cmd);
  cmd->add_option("--label", f->labels, "batch label KEY=VALUE (repeatable)");
  cmd->add_option("--deadline-ms", f->deadline_ms,
                  "wall-clock deadline per job, assembly included (0: the worker's default, "
                  "10 min)");
  cmd->add_flag("--flat", f->flat, "miden-debug compatible one-frame stacks");
  cmd->add_flag("--no-cache", f->no_cache,
                "run every job, even one whose identical earlier run left a result");
  cmd->add_option("--title", f->title, "title of the aggregate flamegraph");
  cmd->add_option("--phase", f->phases,
                  "a phase from event START to event END in every job's summary, as START=END "
                  "(repeatable)");
  cmd->add_option("--marker", f->markers,
                  "events whose names start with PREFIX are phase markers in every job's summary "
                  "(repeatable)");
}

// Appends `values` to `out`, skipping those already there (a manifest may list them too).
void AppendNewOptions(const std::vector<std::string>& values,
                      google::protobuf::RepeatedPtrField<std::string>* out) {
  for (const std::string& v : values) {
    if (std::find(out->begin(), out->end(), v) == out->end()) *out->Add() = v;
  }
}

absl::StatusOr<v1::SubmitBatchRequest> MakeRequest(const SubmitFlags& f) {
  absl::StatusOr<vm::Dialect> dialect = f.program.Dialect();
  if (!dialect.ok()) return dialect.status();
  auto req = BuildSubmitRequest(f.program.programs, f.program.libs, f.labels, f.program.replays,
                                f.program.kernel, *dialect);
  if (!req.ok()) return req;
  if (absl::Status options = f.program.SetBatchOptions(req->mutable_options()); !options.ok()) {
    return options;
  }
  req->mutable_options()->set_deadline_ms(f.deadline_ms);
  req->mutable_options()->set_flat(f.flat);
  req->mutable_options()->set_no_cache(f.no_cache);
  req->mutable_options()->set_title(f.title);
  for (const std::string& phase : f.phases) {
    if (absl::StatusOr<runner::PhasePair> pair = runner::ParsePhasePair(phase); !pair.ok()) {
      return pair.status();
    }
  }
  for (const std::string& marker : f.markers) {
    if (marker.empty()) return absl::InvalidArgumentError("--marker: empty (a marker prefix)");
  }
  AppendNewOptions(f.phases, req->mutable_options()->mutable_phases());
  AppendNewOptions(f.markers, req->mutable_options()->mutable_markers());
  req->set_request_id(absl::StrCat(getpid(), "-", absl::ToUnixNanos(absl::Now())));
  return req;
}

// --- run: the embedded local fleet -------------------------------------------------------

struct RunFlags {
  SubmitFlags submit{ProgramCommand::kRun};
  std::string output = "out";
  int workers = 0;
  bool open = false;  // the coordinator serves its web view; print the batch page's URL
  bool keep = false;  // keep the fleet (and the web view) up after the batch, until Ctrl-C
};

// `run`: starts a LocalFleet, submits, watches, fetches, stops the fleet. Exits 130 when
// interrupted (SIGINT, SIGTERM), after stopping the fleet. With --open the coordinator serves
// its web view and the batch page's URL is printed ("URL http://127.0.0.1:PORT/batches/ID" on
// stdout); with --keep the fleet stays up after the batch ("SERVING <base URL>" on stdout) until
// SIGINT/SIGTERM, and the exit code is then the batch's.
CommandResult RunLocal(const RunFlags& flags) {
  FLAMEFLEET_ASSIGN_OR_RETURN(v1::SubmitBatchRequest request, MakeRequest(flags.submit));
  int workers = flags.workers > 0
                    ? flags.workers
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  char tmpl[] = "/tmp/flamefleet-run-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return absl::InternalError("cannot create a state dir");
  std::string state_dir = tmpl;
  // Keep the children's logs to warnings and errors; the progress line tells the story.
  setenv("GLOG_minloglevel", "1", /*overwrite=*/0);

  // SIGINT/SIGTERM: stop the fleet (the watch stream then ends) and exit 130. SIGUSR2 only
  // releases the signal thread at the end. All three are blocked before the thread starts.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  auto fleet = std::make_shared<LocalFleet>();
  std::atomic<bool> interrupted{false};
  absl::Notification stop_requested;
  std::thread signals([set, &interrupted, &stop_requested, fleet] {
    int sig = 0;
    if (sigwait(&set, &sig) == 0 && sig != SIGUSR2) {
      interrupted = true;
      stop_requested.Notify();
      fleet->Stop();
    }
  });

  const bool open = flags.open || flags.keep;
  ExitCode code{kExitOk};
  bool kept = false;  // the batch ended and we were serving until interrupted
  absl::Status st = fleet->Start(state_dir, workers, /*web=*/open);
  if (st.ok()) {
    std::cerr << "local fleet: coordinator " << fleet->address() << ", " << workers << " worker(s)"
              << (open ? ", web view " + fleet->web_url() : "") << "\n";
    BatchClient client(MakeChannel(fleet->address()));
    auto id = client.Submit(request);
    if (!id.ok()) {
      st = id.status();
    } else {
      std::cerr << "batch " << *id << ": " << request.jobs_size() << " job(s)\n";
      std::cout << "BATCH " << *id << std::endl;  // for scripts (and the tests)
      if (open) {
        const std::string url = absl::StrCat(fleet->web_url(), "/batches/", *id);
        std::cerr << "batch page: " << url << "\n";
        std::cout << "URL " << url << std::endl;
      }
      // The local coordinator is our child: if it dies there is nothing to reconnect to.
      auto final_batch = WatchWithProgress(client, *id, absl::ZeroDuration());
      if (!final_batch.ok()) {
        st = final_batch.status();
      } else {
        st = client.FetchAll(*id, flags.output);
        if (st.ok()) {
          for (const v1::JobStatus& job : final_batch->jobs()) {
            if (job.state() != v1::JOB_STATE_SUCCEEDED) {
              std::cerr << JobStateName(job.state()) << "  " << job.name() << "\n";
              if (!job.error().empty()) std::cerr << "    " << job.error() << "\n";
            }
          }
          // The embedded coordinator is this binary's: it always serves the batch summary.
          std::cerr << "wrote " << flags.output
                    << "/aggregate.svg, aggregate-by-job.svg, summary.json and "
                    << final_batch->jobs_succeeded() << " job flamegraph(s); "
                    << final_batch->aggregate_cycles() << " cycles in total\n";
          code = ExitFor(*final_batch);
          if (flags.keep) {
            std::cerr << "serving " << fleet->web_url() << " (coordinator " << fleet->address()
                      << ") until Ctrl-C\n";
            std::cout << "SERVING " << fleet->web_url() << std::endl;  // for scripts
            // Until SIGINT/SIGTERM, or until a fleet process dies.
            while (!stop_requested.WaitForNotificationWithTimeout(absl::Seconds(1))) {
              if (auto dead = fleet->DeadChild()) {
                st = absl::UnavailableError(*dead);
                break;
              }
            }
            kept = st.ok();
          }
        }
      }
    }
  }
  if (!st.ok() && !interrupted) {
    if (auto dead = fleet->DeadChild()) std::cerr << "error: " << *dead << "\n";
  }
  fleet->Stop();
  kill(getpid(), SIGUSR2);
  signals.join();
  std::error_code ec;
  std::filesystem::remove_all(state_dir, ec);
  if (interrupted && !kept) return ExitCode{kExitInterrupted};
  if (!st.ok()) return st;
  return code;
}

}  // namespace

void AddCoordinatorFlags(CLI::App* cmd, CoordinatorFlags* flags, bool with_address) {
  if (with_address) {
    cmd->add_option("--coordinator", flags->address, "coordinator address HOST:PORT")
        ->envname("FLAMEFLEET_COORDINATOR");
  }
  cmd->add_option("--tls-ca", flags->security.tls_ca_file,
                  "CA bundle (PEM) to verify the coordinator; enables TLS")
      ->envname("FLAMEFLEET_TLS_CA");
  cmd->add_option("--tls-cert", flags->security.tls_cert_file,
                  "client certificate (PEM) for mutual TLS; enables TLS (system roots "
                  "without --tls-ca)")
      ->envname("FLAMEFLEET_TLS_CERT");
  cmd->add_option("--tls-key", flags->security.tls_key_file, "private key (PEM) of --tls-cert")
      ->envname("FLAMEFLEET_TLS_KEY");
  cmd->add_option("--auth-token-file", flags->security.auth_token_file,
                  "file holding the fleet's bearer token")
      ->envname("FLAMEFLEET_AUTH_TOKEN_FILE");
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectToCoordinator(const CoordinatorFlags& flags) {
  absl::StatusOr<Security> loaded = LoadSecurity(flags.security);
  if (!loaded.ok()) return loaded.status();
  return MakeChannel(flags.address, *loaded);
}

void AddClientCommands(CLI::App& app, int* exit_code) {
  auto target = std::make_shared<CoordinatorFlags>();
  auto add_coordinator = [target](CLI::App* cmd) { AddCoordinatorFlags(cmd, target.get()); };
  // The channel to the coordinator, with the security flags loaded (their files are read here).
  auto connect = [target] { return ConnectToCoordinator(*target); };

  auto submit = std::make_shared<SubmitFlags>(ProgramCommand::kSubmit);
  CLI::App* submit_cmd =
      app.add_subcommand("submit", "Submit a batch to the coordinator and print its id");
  AddSubmitOptions(submit_cmd, submit.get());
  add_coordinator(submit_cmd);
  SetFleetCommand(submit_cmd, exit_code, [=]() -> CommandResult {
    auto req = MakeRequest(*submit);
    if (!req.ok()) return req.status();
    auto channel = connect();
    if (!channel.ok()) return channel.status();
    auto id = BatchClient(*channel).Submit(*req);
    if (!id.ok()) return id.status();
    std::cout << *id << "\n";
    return absl::OkStatus();
  });

  auto id = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* status_cmd = app.add_subcommand(
      "status",
      "Print a batch's job states, cycles, errors and most expensive procedures as text or JSON "
      "(--json)");
  status_cmd->add_option("batch_id", *id, "batch id")->required();
  status_cmd->add_flag("--json", *json, "machine-readable output");
  add_coordinator(status_cmd);
  SetFleetCommand(status_cmd, exit_code, [=]() -> CommandResult {
    auto channel = connect();
    if (!channel.ok()) return channel.status();
    BatchClient client(*channel);
    auto b = client.Get(*id);
    if (!b.ok()) return b.status();
    const std::vector<std::pair<std::string, uint64_t>> top = TopProcedures(client, *b);
    if (*json) {
      nlohmann::json j = BatchJson(*b, true);
      j["top_procedures"] = nlohmann::json::array();
      for (const auto& [name, cycles] : top) {
        j["top_procedures"].push_back({{"name", name}, {"self_cycles", cycles}});
      }
      std::cout << j.dump(2) << "\n";
    } else {
      PrintBatch(*b);
      if (!top.empty()) {
        std::cout << "most expensive procedures (self cycles over all jobs):\n";
        for (const auto& [name, cycles] : top) {
          const double share = b->aggregate_cycles() == 0
                                   ? 0.0
                                   : 100.0 * static_cast<double>(cycles) /
                                         static_cast<double>(b->aggregate_cycles());
          std::cout << absl::StrFormat("  %12d  %5.1f%%  %s\n", cycles, share, name);
        }
      }
    }
    return absl::OkStatus();
  });

  auto list_labels = std::make_shared<std::vector<std::string>>();
  auto list_state = std::make_shared<std::string>();
  auto list_since = std::make_shared<std::string>();
  CLI::App* list_cmd =
      app.add_subcommand("list", "List batches, newest first, as text or JSON (--json)");
  list_cmd->add_option("--label", *list_labels, "only batches with KEY=VALUE (repeatable)");
  list_cmd->add_option("--state", *list_state, "RUNNING, SUCCEEDED, FAILED or CANCELLED");
  list_cmd->add_option("--since", *list_since, "only batches created in the last DURATION (24h)");
  list_cmd->add_flag("--json", *json, "machine-readable output");
  add_coordinator(list_cmd);
  SetFleetCommand(list_cmd, exit_code, [=]() -> CommandResult {
    v1::ListBatchesRequest req;
    absl::Status labels = ParseLabels(*list_labels, req.mutable_labels());
    absl::StatusOr<int64_t> since = ParseSince(*list_since);
    if (!labels.ok() || !since.ok()) return labels.ok() ? since.status() : labels;
    req.set_since_unix_ms(*since);
    if (!list_state->empty()) {
      auto st = ParseBatchState(*list_state);
      if (!st.has_value()) return absl::InvalidArgumentError("--state: unknown state");
      req.set_state(*st);
    }
    auto channel = connect();
    if (!channel.ok()) return channel.status();
    auto batches = BatchClient(*channel).List(req);
    if (!batches.ok()) return batches.status();
    if (*json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const v1::Batch& b : *batches) arr.push_back(BatchJson(b, false));
      std::cout << arr.dump(2) << "\n";
    } else {
      for (const v1::Batch& b : *batches) {
        std::cout << b.batch_id() << "  " << StateName(b.state()) << "  " << ProgressLine(b, 20)
                  << "\n";
      }
    }
    return absl::OkStatus();
  });

  CLI::App* watch_cmd =
      app.add_subcommand("watch",
                         "Follow a batch with a progress line on stderr until it ends; print its "
                         "state, exit 0 only if every job succeeded");
  watch_cmd->add_option("batch_id", *id, "batch id")->required();
  auto reconnect_s = std::make_shared<double>(absl::ToDoubleSeconds(kDefaultWatchReconnectFor));
  watch_cmd->add_option("--reconnect-for", *reconnect_s,
                        "seconds to keep reconnecting (with backoff) when the coordinator "
                        "goes away, e.g. restarts; 0: give up at once (default 60)");
  add_coordinator(watch_cmd);
  SetFleetCommand(watch_cmd, exit_code, [=]() -> CommandResult {
    auto channel = connect();
    if (!channel.ok()) return channel.status();
    if (!(*reconnect_s >= 0)) {
      return absl::InvalidArgumentError("--reconnect-for: expected seconds >= 0");
    }
    BatchClient client(*channel);
    auto b = WatchWithProgress(client, *id, absl::Seconds(*reconnect_s));
    if (!b.ok()) return b.status();
    std::cout << StateName(b->state()) << "\n";
    return ExitFor(*b);
  });

  CLI::App* cancel_cmd =
      app.add_subcommand("cancel", "Cancel a batch's unfinished jobs and print its state");
  cancel_cmd->add_option("batch_id", *id, "batch id")->required();
  add_coordinator(cancel_cmd);
  SetFleetCommand(cancel_cmd, exit_code, [=]() -> CommandResult {
    auto channel = connect();
    if (!channel.ok()) return channel.status();
    auto b = BatchClient(*channel).Cancel(*id);
    if (!b.ok()) return b.status();
    std::cout << StateName(b->state()) << "\n";
    return absl::OkStatus();
  });

  auto fetch_out = std::make_shared<std::string>("out");
  auto fetch_formats = std::make_shared<std::vector<std::string>>();
  CLI::App* fetch_cmd = app.add_subcommand(
      "fetch",
      "Download aggregate, aggregate-by-job and jobs/<name> profiles into a directory as .svg and "
      ".folded (--format: that format only, e.g. pprof -> .pb.gz) and the batch's summary.json");
  fetch_cmd->add_option("batch_id", *id, "batch id")->required();
  fetch_cmd->add_option("-o,--output", *fetch_out, "output directory");
  fetch_cmd->add_option("--format", *fetch_formats,
                        "svg, folded, pprof (.pb.gz) or speedscope (.speedscope.json); "
                        "repeatable (default: svg and folded)");
  add_coordinator(fetch_cmd);
  SetFleetCommand(fetch_cmd, exit_code, [=]() -> CommandResult {
    std::vector<profile::ProfileFormat> formats;
    for (const std::string& name : *fetch_formats) {
      absl::StatusOr<profile::ProfileFormat> f = profile::ParseProfileFormat(name);
      if (!f.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--format: ", f.status().message()));
      }
      formats.push_back(*f);
    }
    auto channel = connect();
    if (!channel.ok()) return channel.status();
    return BatchClient(*channel).FetchAll(*id, *fetch_out, formats);
  });

  struct AggregateFlags {
    std::vector<std::string> labels;
    std::string since;
    std::string title;
    std::string output;
  };
  auto agg = std::make_shared<AggregateFlags>();
  CLI::App* agg_cmd = app.add_subcommand(
      "aggregate",
      "Merge the job profiles of every matching ended batch (e.g. last night's suite) into one "
      "profile; the output name picks the format (.svg, .pb.gz, .speedscope.json, else folded)");
  agg_cmd->add_option("--label", agg->labels, "only batches with KEY=VALUE (repeatable)");
  agg_cmd->add_option("--since", agg->since,
                      "only batches created in the last DURATION (e.g. 24h; default: all)");
  agg_cmd->add_option("--title", agg->title, "title of the flamegraph");
  agg_cmd->add_option("-o,--output", agg->output, "output file")->required();
  add_coordinator(agg_cmd);
  SetFleetCommand(agg_cmd, exit_code, [=]() -> CommandResult {
    v1::AggregateRequest req;
    absl::Status labels = ParseLabels(agg->labels, req.mutable_labels());
    absl::StatusOr<int64_t> since = ParseSince(agg->since);
    if (!labels.ok() || !since.ok()) return labels.ok() ? since.status() : labels;
    req.set_since_unix_ms(*since);
    req.set_title(agg->title);
    // A plain SVG is drawn by the fleet's renderer; every other format is converted here
    // from the merged profile.
    const profile::OutputFormat format = profile::OutputFormatForPath(agg->output);
    const bool server_svg = format.format == profile::ProfileFormat::kSvg && !format.gzip;
    req.set_format(server_svg ? v1::ARTIFACT_FORMAT_SVG : v1::ARTIFACT_FORMAT_PROFILE);
    auto channel = connect();
    if (!channel.ok()) return channel.status();
    absl::StatusOr<BatchClient::Aggregated> result = BatchClient(*channel).Aggregate(req);
    absl::Status st = result.status();
    if (st.ok() && server_svg) {
      st = renderer::WriteBytesToFile(agg->output, result->data);
    } else if (st.ok()) {
      absl::StatusOr<profile::Profile> merged = profile::ParseProfile(result->data);
      st = merged.status();
      if (st.ok()) {
        renderer::RenderOptions options;
        options.title = agg->title.empty() ? "flamefleet aggregate" : agg->title;
        options.count_name = "cycles";
        st = renderer::WriteProfileFile(*merged, agg->output, options);
      }
    }
    if (!st.ok()) return st;
    std::cerr << "merged " << result->header.batch_ids_size() << " batches ("
              << absl::StrJoin(result->header.batch_ids(), " ") << "), " << result->header.jobs()
              << " jobs, " << result->header.cycles() << " cycles -> " << agg->output << "\n";
    return absl::OkStatus();
  });

  // health: a gRPC health check for container health checks and scripts (the health-only port
  // needs neither TLS nor a token; on a main port pass the client security flags).
  struct HealthFlags {
    CoordinatorFlags target;
    std::string service;
    double timeout_s = 3;
  };
  auto health = std::make_shared<HealthFlags>();
  CLI::App* health_cmd = app.add_subcommand(
      "health",
      "Ask a service's grpc.health.v1 endpoint and print its status; exit 0 only if SERVING");
  health_cmd
      ->add_option("address", health->target.address, "HOST:PORT (e.g. a --health-listen port)")
      ->required();
  health_cmd->add_option("--service", health->service, "service name (default: the server)");
  health_cmd->add_option("--timeout", health->timeout_s, "seconds to wait (default 3)");
  AddCoordinatorFlags(health_cmd, &health->target, /*with_address=*/false);
  SetFleetCommand(health_cmd, exit_code, [=]() -> CommandResult {
    auto channel = ConnectToCoordinator(health->target);
    if (!channel.ok()) return channel.status();
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(health->timeout_s)));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(health->service);
    grpc::health::v1::HealthCheckResponse response;
    absl::Status st = FromGrpcStatus(
        grpc::health::v1::Health::NewStub(*channel)->Check(&ctx, request, &response));
    if (!st.ok()) return st;
    std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())
              << "\n";
    return ExitCode{response.status() == grpc::health::v1::HealthCheckResponse::SERVING
                        ? kExitOk
                        : kExitFailed};
  });

  auto run = std::make_shared<RunFlags>();
  CLI::App* run_cmd = app.add_subcommand(
      "run",
      "Profile programs on an embedded local fleet and write SVG flamegraphs and folded stacks "
      "to a directory");
  AddSubmitOptions(run_cmd, &run->submit);
  run_cmd->add_option("-o,--output", run->output, "output directory (default out)");
  run_cmd->add_option("--workers", run->workers, "worker processes (default: cores)");
  run_cmd->add_flag("--open", run->open,
                    "serve the coordinator's web view on loopback and print the batch page's URL");
  run_cmd->add_flag("--keep", run->keep,
                    "with --open: keep the fleet and its web view up after the batch, until "
                    "Ctrl-C (implies --open)");
  SetFleetCommand(run_cmd, exit_code, [run] { return RunLocal(*run); });
}

}  // namespace flamefleet::cli

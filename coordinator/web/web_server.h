// The coordinator's web view (issue #17): batches, jobs, flamegraphs and diffs in a browser,
// served by the coordinator itself on --http-listen (off by default), read-only.
//
//   WebServerOptions options{.listen = "127.0.0.1:0", .security = flags->security};
//   FLAMEFLEET_ASSIGN_OR_RETURN(std::unique_ptr<WebServer> web,
//                               WebServer::Start(&manager, options));
//   AnnounceHttpListening(options.listen, web->port());  // common/service_main.h
//   ...
//   web->Shutdown();                      // before the manager goes away
//
// Pages (server-rendered HTML, a small embedded script, no CDN, works offline):
//   GET /                               batches, newest first; ?label=KEY=VALUE (repeatable),
//                                       ?state=RUNNING|SUCCEEDED|FAILED|CANCELLED, ?limit=N:
//                                       BatchManager::ListBatches, the call `flamefleet list`
//                                       makes; live updates by polling /api/batches
//   GET /batches/ID                     progress, job table (?sort=index|name|cycles|delta,
//                                       ?order=asc|desc, ?page=N), aggregate flamegraph, the
//                                       summary's procedure and phase tables, the link to the
//                                       diff against the previous batch with the same labels
//   GET /batches/ID/aggregate?format=F  the aggregate as svg|folded|pprof|speedscope
//   GET /batches/ID/summary.json        the batch's summary.json (as `fetch` writes it)
//   GET /batches/ID/jobs/NAME           a job: state, cycles, stack, error, flamegraph;
//                                       ?format=F its downloads
//   GET /diff?before=A&after=B          what `flamefleet diff A B` reports, and the
//                                       differential flamegraph (?format=svg)
//   GET /api/batches[?filters]          JSON of the list; GET /api/batches/ID a batch's counts
//   GET|POST /login                     the token form (when the coordinator has a token)
//   GET /static/web.js, /static/web.css
//
// Security: with a token (Security::token, the gRPC API's bearer token) every page but /login
// and /static/ needs "Authorization: Bearer <token>" or the session cookie the login form sets
// (`Secure; HttpOnly; SameSite=Strict`; its value is a SHA-256 of the token, never the token);
// otherwise 401. With a TLS certificate the port serves HTTPS only (client certificates required
// with client_auth). Every path segment and query parameter is validated: an unknown parameter,
// a malformed value or one over its limit is a 400 naming it, an unknown batch or job (a name
// with "..", say) a 404; nothing is ever read from a path taken from a request. HTML responses
// carry a Content-Security-Policy that runs only /static/web.js.
//
// Limits: a page shows at most `jobs_per_page` jobs (the rest on further pages), the summary
// tables at most `summary_rows` rows each; a request line, headers and a body (login only) are
// bounded by httplib's defaults and `max_body_bytes`.
//
// Thread-safety: Start and Shutdown from one thread; requests are served by a pool of
// `threads` threads, each calling the BatchManager (thread-safe).
#ifndef FLAMEFLEET_COORDINATOR_WEB_WEB_SERVER_H_
#define FLAMEFLEET_COORDINATOR_WEB_WEB_SERVER_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/security.h"
#include "coordinator/batch_manager.h"

namespace flamefleet::coordinator {

// Defaults and ceilings of WebServerOptions (coordinator flags in brackets).
inline constexpr size_t kDefaultJobsPerPage = 500;  // [--http-jobs-per-page]
inline constexpr size_t kMaxJobsPerPage = 10000;
inline constexpr size_t kDefaultSummaryRows = 50;  // [--http-summary-rows]
inline constexpr size_t kMaxSummaryRows = 10000;

struct WebServerOptions {
  // host:port to listen on ("127.0.0.1:0": an OS-chosen port; "0.0.0.0:7780", "[::]:7780").
  std::string listen = "127.0.0.1:0";
  // TLS (a certificate: HTTPS) and the token, as for the gRPC port.
  Security security;
  // Jobs in one page of a batch's job table (1..kMaxJobsPerPage).
  size_t jobs_per_page = kDefaultJobsPerPage;
  // Rows of each summary table (procedures, phases) on a batch page (1..kMaxSummaryRows).
  size_t summary_rows = kDefaultSummaryRows;
  // Threads serving requests.
  int threads = 8;
  // How often a page of a running batch polls for changes.
  absl::Duration poll_interval = absl::Seconds(2);
  // Largest request body (the login form's token).
  size_t max_body_bytes = 8192;
};

class WebServer {
 public:
  // Validates `options` (InvalidArgument naming the field), binds the port (Unavailable if it
  // cannot, e.g. "address already in use") and starts serving from `manager` (not owned; it
  // must outlive the server, or Shutdown must come first).
  static absl::StatusOr<std::unique_ptr<WebServer>> Start(BatchManager* manager,
                                                          WebServerOptions options);
  ~WebServer();  // Shutdown()
  WebServer(const WebServer&) = delete;
  WebServer& operator=(const WebServer&) = delete;

  // Returns the port bound (the OS's choice for port 0).
  int port() const { return port_; }
  // True if the port serves HTTPS.
  bool https() const;

  // Stops accepting, finishes the requests in progress and joins the threads. Idempotent.
  void Shutdown();

 private:
  class Impl;
  explicit WebServer(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace flamefleet::coordinator

#endif  // FLAMEFLEET_COORDINATOR_WEB_WEB_SERVER_H_

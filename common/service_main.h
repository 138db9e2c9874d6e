// What every service main does first and once it serves: parse flags (accepting the documented
// dashed spellings such as --state-dir for the abseil flag state_dir), set up logging and the
// shutdown signals, and announce the chosen port on stdout ("LISTENING <port>", which
// `flamefleet run` and the multi-process tests wait for instead of sleeping).
//
//   int main(int argc, char** argv) {
//     InitServiceMain(argc, argv, "flamefleet-renderer --listen ADDR");
//     ... start the server ...
//     AnnounceListening(server->port());
//     WaitForShutdownSignal();
//   }
#ifndef FLAMEFLEET_COMMON_SERVICE_MAIN_H_
#define FLAMEFLEET_COMMON_SERVICE_MAIN_H_

#include <string>

namespace flamefleet {

// Rewrites dashes in "--flag-name[=...]" arguments to underscores (in place), parses the abseil
// flags, initialises logging and blocks SIGTERM/SIGINT in this and every later thread so that
// WaitForShutdownSignal() receives them. Call first in main(), before starting threads.
void InitServiceMain(int argc, char** argv, const char* usage);

// Prints "LISTENING <port>" on stdout and flushes it.
void AnnounceListening(int port);

// Logs the health-only port and, if `requested` (the --health-listen address) asked for port 0,
// prints "HEALTH_LISTENING <port>" on stdout and flushes it. Call after AnnounceListening.
void AnnounceHealthListening(const std::string& requested, int port);

// Logs the web view's port and, if `requested` (the --http-listen address) asked for port 0,
// prints "HTTP_LISTENING <port>" on stdout and flushes it. Call after AnnounceListening (and
// AnnounceHealthListening), so a launcher reads LISTENING first.
void AnnounceHttpListening(const std::string& requested, int port, bool https);

}  // namespace flamefleet

#endif  // FLAMEFLEET_COMMON_SERVICE_MAIN_H_

// MASM programs shared by several test suites.
#ifndef FLAMEFLEET_TESTS_TESTING_TEST_PROGRAMS_H_
#define FLAMEFLEET_TESTS_TESTING_TEST_PROGRAMS_H_

namespace flamefleet::testutil {

// Writes one element on every 4096-element (32 KiB) memory page, forever: without a memory
// budget it reaches 5 GB in 3 M cycles (issue #12).
inline constexpr char kPageHogProgram[] = R"(begin
  push.0
  push.1
  while.true
    push.7 dup.1 mem_store
    push.4096 add
    push.1
  end
end
)";

}  // namespace flamefleet::testutil

#endif  // FLAMEFLEET_TESTS_TESTING_TEST_PROGRAMS_H_

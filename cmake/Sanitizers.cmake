# Sanitized builds of the native modules (README.md, "Two commands"; ./sluice sanitize):
# SLUICE_SANITIZE=address builds everything with AddressSanitizer and UndefinedBehaviorSanitizer,
# SLUICE_SANITIZE=thread with ThreadSanitizer. Every finding stops the program
# (-fno-sanitize-recover=all here, halt_on_error=1 in the *SAN_OPTIONS ./sluice sets), so a
# finding fails its test. The libraries the project takes as binaries (libarrow, librdkafka) stay
# uninstrumented: their own bugs are not looked for, only what the project's code does to them.
include_guard(GLOBAL)

set(SLUICE_SANITIZE "" CACHE STRING "Sanitizers to build with: address (ASan+UBSan), thread (TSan), or none")
set_property(CACHE SLUICE_SANITIZE PROPERTY STRINGS "" address thread)

if(SLUICE_SANITIZE STREQUAL "address")
  # GCC 12's flow analysis under ASan sees uninitialized members in libstdc++'s own std::regex and
  # std::function (-Wmaybe-uninitialized), which -Werror would make errors; ASan and UBSan check
  # the real reads at run time.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
                      $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  add_link_options(-fsanitize=address,undefined)
elseif(SLUICE_SANITIZE STREQUAL "thread")
  # GCC warns that TSan does not model std::atomic_thread_fence (-Wtsan), which -Werror would
  # make an error; what TSan reports through the one fence (broker-ext's NativeFetchSource
  # buffer pool) is judged by hand.
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer
                      $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>)
  add_link_options(-fsanitize=thread)
elseif(NOT SLUICE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "SLUICE_SANITIZE=${SLUICE_SANITIZE}: set address, thread, or nothing")
endif()

if(NOT SLUICE_SANITIZE STREQUAL "")
  # -O1 and line tables (-g1), as the sanitizers' own docs advise, for RelWithDebInfo's -O2 -g:
  # a report still names every frame's function, file and line, and the sanitized build, which
  # the test command compiles from nothing on every run, takes about 40 % less time on 2 cores
  # (control_server.cc under ASan: 14.7 s at -O2 -g, 8.5 s at -O1 -g1).
  set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "-O1 -g1 -DNDEBUG")
  # The tests' own code at -O0: every target that links GoogleTest's main gets it after the -O1
  # above, and the last -O wins. The code under test stays at -O1. Test files are two thirds of
  # what the sanitized build compiles (their assertion macros expand into much instrumented code),
  # and -O0 halves their time (daemon_process_test.cc under ASan: 30.9 s at -O1, 16.1 s at -O0);
  # the suites' run time is spent in the code under test.
  set_property(TARGET GTest::gtest_main APPEND PROPERTY INTERFACE_COMPILE_OPTIONS -O0)
endif()

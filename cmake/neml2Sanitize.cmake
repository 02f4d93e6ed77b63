# Sanitizer builds of the project's own programs (tests, examples, benchmarks), and the
# switch for the libFuzzer targets. The installed neml2::dispatch target is untouched:
# a sanitizer is a property of a build, not of the library's users.
#
#   NEML2_SANITIZE=address,undefined   ASan + UBSan (any list that -fsanitize= takes)
#   NEML2_SANITIZE=thread              TSan
#   NEML2_FUZZ=ON                      tests/fuzz (Clang only)
#
# LibTorch is not instrumented; the suppressions and options a run needs are in
# tests/sanitizers/ and scripts/sanitize.sh sets them.
set(NEML2_SANITIZE "" CACHE STRING
    "Sanitizers for the project's programs, as -fsanitize= takes them (e.g. address,undefined or thread)")
option(NEML2_FUZZ "Build the libFuzzer targets in tests/fuzz (Clang)" OFF)

if(NEML2_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    message(FATAL_ERROR "NEML2_SANITIZE needs GCC or Clang (compiler: ${CMAKE_CXX_COMPILER_ID})")
  endif()
  if(NEML2_SANITIZE MATCHES "thread" AND NEML2_SANITIZE MATCHES "address|leak|memory")
    message(FATAL_ERROR "NEML2_SANITIZE=${NEML2_SANITIZE}: ThreadSanitizer cannot be combined "
                        "with AddressSanitizer; make two builds")
  endif()
  # Every finding fails the test (UBSan would otherwise print and carry on), and the
  # reports get readable stacks: file and line for every frame, which is all a report
  # prints (-gline-tables-only, GCC's -g1; full -g costs a fifth more compile time).
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    set(_neml2_sanitize_debug -gline-tables-only)
  else()
    set(_neml2_sanitize_debug -g1)
  endif()
  set(_neml2_sanitize_flags -fsanitize=${NEML2_SANITIZE} -fno-sanitize-recover=all
                            -fno-omit-frame-pointer ${_neml2_sanitize_debug})
  target_compile_options(neml2_project_options INTERFACE ${_neml2_sanitize_flags})
  target_link_options(neml2_project_options INTERFACE ${_neml2_sanitize_flags})
  message(STATUS "neml2: project programs built with -fsanitize=${NEML2_SANITIZE}")
endif()

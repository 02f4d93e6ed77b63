# Helpers for the project's own programs (tests, examples, benchmarks): they get
# the warning flags and -Werror that the installed neml2::dispatch target must
# not impose on its users.

# Warnings for code we own. Torch headers come in as SYSTEM includes through the
# imported torch target, so these flags only see neml2's headers and our sources.
add_library(neml2_project_options INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
  target_compile_options(neml2_project_options INTERFACE -Wall -Wextra -Wpedantic)
  if(NEML2_WERROR)
    target_compile_options(neml2_project_options INTERFACE -Werror)
  endif()
endif()

# neml2_add_executable(<name> <source>...)
# An executable linked to neml2::dispatch and built with the project's warnings.
function(neml2_add_executable name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE neml2::dispatch neml2_project_options)
endfunction()

# neml2_add_programs(<folder> PREFIX <prefix>)
# One executable per <folder>/*.cpp: target <prefix><stem>, file <stem> in the
# matching build folder (examples/demo.cpp -> build/examples/demo). An empty
# folder adds nothing; CONFIGURE_DEPENDS picks up a new file at the next build.
function(neml2_add_programs folder)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "PREFIX" "")
  file(GLOB _sources CONFIGURE_DEPENDS "${folder}/*.cpp")
  list(SORT _sources)
  foreach(_src IN LISTS _sources)
    get_filename_component(_stem "${_src}" NAME_WE)
    neml2_add_executable(${arg_PREFIX}${_stem} "${_src}")
    set_target_properties(${arg_PREFIX}${_stem} PROPERTIES OUTPUT_NAME ${_stem})
  endforeach()
endfunction()

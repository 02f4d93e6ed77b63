# The ctest test install_consumer: install a neml2 build into a fresh prefix, then
# configure, build and run this consumer project against that prefix only, as a
# user's project would, and import the installed Python tools.
#
#   cmake -DBUILD_DIR=<neml2 build> -DSOURCE_DIR=<neml2 source> -DWORK_DIR=<scratch>
#         -DGENERATOR=<generator> -DSTUB=<model_aoti.i> -DPYTHON=<python with torch>
#         [-DMAKE_PROGRAM=...] [-DCXX_COMPILER=...] -P test_install.cmake
foreach(_var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR STUB PYTHON)
  if(NOT DEFINED ${_var})
    message(FATAL_ERROR "test_install.cmake: -D${_var}=... is required")
  endif()
endforeach()

# run(<what> <command>...): run a command, fail with its output if it fails; its
# standard output is left in run_output. (No ';' inside an argument: CMake splits lists.)
function(run what)
  execute_process(COMMAND ${ARGN}
                  RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _out
                  ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${_rc}):\n${_out}\n${_err}")
  endif()
  message(STATUS "${what}: ok")
  set(run_output "${_out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(_prefix "${WORK_DIR}/prefix")

# 1. Install: headers, the package config, the Python tools.
run("cmake --install" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${_prefix}")
file(GLOB_RECURSE _config "${_prefix}/neml2Config.cmake")
foreach(_file include/neml2/aoti.h include/neml2/csrc/dispatchers/factory.h
              share/neml2/python/neml2/compile/__init__.py)
  if(NOT EXISTS "${_prefix}/${_file}")
    message(FATAL_ERROR "the install has no ${_file}")
  endif()
endforeach()
if(NOT _config)
  message(FATAL_ERROR "the install has no neml2Config.cmake")
endif()
message(STATUS "installed into ${_prefix}: headers, ${_config}, Python tools")

# 2. The consumer against the prefix alone (no Python_EXECUTABLE: the package must
#    find torch by itself, through the Python neml2 was configured with).
set(_args -S "${SOURCE_DIR}/examples/consumer" -B "${WORK_DIR}/build" -G "${GENERATOR}"
          "-DCMAKE_PREFIX_PATH=${_prefix}" -DCMAKE_BUILD_TYPE=Release)
if(MAKE_PROGRAM)
  list(APPEND _args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CXX_COMPILER)
  list(APPEND _args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
run("configure examples/consumer" "${CMAKE_COMMAND}" ${_args})
run("build examples/consumer" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" --parallel 2)
run("run consumer" "${WORK_DIR}/build/consumer" "${STUB}")
message("${run_output}")

# 3. The installed Python tools, not the source tree's.
run("import the installed neml2 Python package"
    "${CMAKE_COMMAND}" -E env "PYTHONPATH=${_prefix}/share/neml2/python"
    "${PYTHON}" -c "import neml2.compile\nprint(neml2.__file__)")
string(STRIP "${run_output}" _module)
file(REAL_PATH "${_prefix}" _real_prefix)
file(REAL_PATH "${_module}" _real_module)
string(FIND "${_real_module}" "${_real_prefix}/" _at)
if(NOT _at EQUAL 0)
  message(FATAL_ERROR "neml2 was imported from ${_module}, not from the install in ${_prefix}")
endif()
run("python -m neml2.compile --help"
    "${CMAKE_COMMAND}" -E env "PYTHONPATH=${_prefix}/share/neml2/python"
    "${PYTHON}" -m neml2.compile --help)
message(STATUS "install_consumer: passed")

# Run a program that must reject its command line: exit status 2, nothing on standard
# output, and exactly one line on standard error that matches EXPECT (a regex).
#
#   cmake -DEXPECT=<regex> -P check_usage_error.cmake -- <program> <arguments>...
set(_command "")
set(_collect OFF)
math(EXPR _last "${CMAKE_ARGC} - 1")
foreach(_i RANGE ${_last})
  if(_collect)
    list(APPEND _command "${CMAKE_ARGV${_i}}")
  elseif("${CMAKE_ARGV${_i}}" STREQUAL "--")
    set(_collect ON)
  endif()
endforeach()
if(NOT _command OR NOT DEFINED EXPECT)
  message(FATAL_ERROR "usage: cmake -DEXPECT=<regex> -P check_usage_error.cmake -- <command>...")
endif()

execute_process(COMMAND ${_command} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
string(REGEX MATCHALL "\n" _newlines "${_err}")
list(LENGTH _newlines _lines)
if(NOT _rc EQUAL 2 OR NOT _out STREQUAL "" OR NOT _lines EQUAL 1 OR NOT _err MATCHES "${EXPECT}")
  message(FATAL_ERROR "expected exit status 2 and one line on stderr matching '${EXPECT}'; got "
                      "status ${_rc}, stdout '${_out}', stderr '${_err}'")
endif()
message(STATUS "rejected as expected: ${_err}")

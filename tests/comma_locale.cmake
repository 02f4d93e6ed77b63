# Generates the de_DE.UTF-8 locale into OUT/de_DE.UTF-8 with localedef, for the tests
# that switch to a comma-decimal locale (tests/support/comma_locale.h). Never fails: a
# system without localedef or without the de_DE locale source leaves the tests to use an
# installed locale, or to skip and say why.
if(EXISTS "${OUT}/de_DE.UTF-8/LC_NUMERIC")
  message(STATUS "comma_locale: ${OUT}/de_DE.UTF-8 already there")
  return()
endif()
find_program(_localedef localedef)
if(NOT _localedef)
  message(STATUS "comma_locale: no localedef; the locale tests use an installed locale or skip")
  return()
endif()
file(MAKE_DIRECTORY "${OUT}")
execute_process(COMMAND "${_localedef}" -i de_DE -f UTF-8 "${OUT}/de_DE.UTF-8"
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
# localedef exits 1 for warnings with a usable locale written; check the result instead.
if(EXISTS "${OUT}/de_DE.UTF-8/LC_NUMERIC")
  message(STATUS "comma_locale: generated ${OUT}/de_DE.UTF-8")
else()
  message(STATUS "comma_locale: localedef failed (${_rc}): ${_out}")
endif()

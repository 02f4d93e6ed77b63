# The 'docs' target: Doxygen over include/ and doc/*.md into <build>/doc/html.
# WARN_AS_ERROR makes an undocumented public name or a broken reference fail it.
find_package(Doxygen REQUIRED)

configure_file("${PROJECT_SOURCE_DIR}/doc/Doxyfile.in" "${PROJECT_BINARY_DIR}/doc/Doxyfile" @ONLY)
add_custom_target(docs
  COMMAND "${DOXYGEN_EXECUTABLE}" "${PROJECT_BINARY_DIR}/doc/Doxyfile"
  WORKING_DIRECTORY "${PROJECT_BINARY_DIR}/doc"
  COMMENT "Doxygen: ${PROJECT_BINARY_DIR}/doc/html/index.html"
  VERBATIM)

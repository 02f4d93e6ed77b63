# Install the headers, the exported neml2::dispatch target with its package
# config, and the Python tools (python/neml2) that write the artifacts it reads.
include(CMakePackageConfigHelpers)

set(NEML2_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/neml2" CACHE STRING
    "Where neml2Config.cmake is installed, relative to the prefix")
set(NEML2_INSTALL_PYTHONDIR "${CMAKE_INSTALL_DATADIR}/neml2/python" CACHE STRING
    "Where the neml2 Python package sources are installed, relative to the prefix")

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")

install(TARGETS neml2_dispatch EXPORT neml2Targets)
install(EXPORT neml2Targets
        NAMESPACE neml2::
        DESTINATION "${NEML2_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/neml2Config.cmake.in"
  "${PROJECT_BINARY_DIR}/neml2Config.cmake"
  INSTALL_DESTINATION "${NEML2_INSTALL_CMAKEDIR}"
  PATH_VARS NEML2_INSTALL_PYTHONDIR)
# Header-only: any architecture, and 0.x releases only promise the same minor.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/neml2ConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion
  ARCH_INDEPENDENT)
install(FILES
          "${PROJECT_BINARY_DIR}/neml2Config.cmake"
          "${PROJECT_BINARY_DIR}/neml2ConfigVersion.cmake"
          "${PROJECT_SOURCE_DIR}/cmake/neml2FindTorch.cmake"
        DESTINATION "${NEML2_INSTALL_CMAKEDIR}")

if(IS_DIRECTORY "${PROJECT_SOURCE_DIR}/python/neml2")
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/python/neml2"
          DESTINATION "${NEML2_INSTALL_PYTHONDIR}"
          PATTERN "__pycache__" EXCLUDE
          PATTERN "*.pyc" EXCLUDE)
endif()

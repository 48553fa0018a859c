# Settings shared by the native modules (native/, broker-ext/): language level, warnings,
# and the third-party libraries as imported targets.
include_guard(GLOBAL)

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
include(GNUInstallDirs)
# An installed tree runs wherever it is copied (docs/brokerd.md, "Installing"): programs in bin/
# find libsluice and libarrow, which are installed beside each other in lib/, through a path
# relative to themselves; libraries set "$ORIGIN" themselves. Build-tree binaries keep absolute
# paths to the libraries they were linked with (CMake's build RPATH), as the tests need.
set(CMAKE_INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")

get_filename_component(SLUICE_REPO_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

# Which test suites a build makes. ALL: every one. UNSANITIZED_ONLY: the checks a sanitized build of
# the same sources does not make, for a plain build that comes after it (./sluice test runs the
# suites under ASan+UBSan first, CONTRIBUTING.md, "Build and test"): native/'s tests across fork(),
# labelled no-asan, and broker-ext/'s installed tree.
set(SLUICE_TESTS ALL CACHE STRING "Test suites to build: ALL or UNSANITIZED_ONLY")
set_property(CACHE SLUICE_TESTS PROPERTY STRINGS ALL UNSANITIZED_ONLY)
if(NOT SLUICE_TESTS MATCHES "^(ALL|UNSANITIZED_ONLY)$")
  message(FATAL_ERROR "SLUICE_TESTS is ALL or UNSANITIZED_ONLY, not '${SLUICE_TESTS}'")
endif()

function(sluice_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion -Werror)
endfunction()

# Arrow C++ comes from the pyarrow wheel in the project-local environment (./sluice setup):
# its include/ directory and its versioned libarrow.so.NNNN. The wheel ships no CMake package,
# so this builds the imported target Arrow::arrow itself.
if(NOT TARGET Arrow::arrow)
  find_program(SLUICE_PYTHON NAMES python3 PATHS "${SLUICE_REPO_ROOT}/.venv/bin" NO_DEFAULT_PATH)
  if(NOT SLUICE_PYTHON)
    message(FATAL_ERROR "No project Python environment in ${SLUICE_REPO_ROOT}/.venv: run ./sluice setup")
  endif()
  execute_process(
    COMMAND "${SLUICE_PYTHON}" -c
            "import pyarrow; print(pyarrow.get_include()); print(pyarrow.get_library_dirs()[0]); print(pyarrow.__version__)"
    OUTPUT_VARIABLE _pyarrow_out
    RESULT_VARIABLE _pyarrow_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _pyarrow_rc EQUAL 0)
    message(FATAL_ERROR "pyarrow is not importable from ${SLUICE_PYTHON}: run ./sluice setup")
  endif()
  string(REPLACE "\n" ";" _pyarrow_out "${_pyarrow_out}")
  list(GET _pyarrow_out 0 SLUICE_ARROW_INCLUDE_DIR)
  list(GET _pyarrow_out 1 SLUICE_ARROW_LIB_DIR)
  list(GET _pyarrow_out 2 SLUICE_ARROW_VERSION)
  file(GLOB _arrow_libs "${SLUICE_ARROW_LIB_DIR}/libarrow.so.[0-9]*")
  list(LENGTH _arrow_libs _arrow_lib_count)
  if(NOT _arrow_lib_count EQUAL 1)
    message(FATAL_ERROR "Expected one libarrow.so.N in ${SLUICE_ARROW_LIB_DIR}, found: ${_arrow_libs}")
  endif()
  add_library(Arrow::arrow SHARED IMPORTED GLOBAL)
  set_target_properties(Arrow::arrow PROPERTIES
    IMPORTED_LOCATION "${_arrow_libs}"
    INTERFACE_INCLUDE_DIRECTORIES "${SLUICE_ARROW_INCLUDE_DIR}"
    # Arrow's headers are third-party: their warnings are not ours to fail on.
    INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${SLUICE_ARROW_INCLUDE_DIR}")
  message(STATUS "Arrow C++ ${SLUICE_ARROW_VERSION} from pyarrow: ${_arrow_libs}")
endif()

find_package(Threads REQUIRED)
find_package(GTest REQUIRED)
include(GoogleTest)
enable_testing()

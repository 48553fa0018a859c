# Run by `cmake --install` (see CMakeLists.txt): writes share/sluice/runtime-packages.txt, the
# Debian packages that own the shared libraries the installed programs load from outside the
# tree, one name a line, so that an image can `apt-get install` exactly them (docs/brokerd.md,
# "Installing"). Inputs: SLUICE_INSTALL_ROOT (the tree, DESTDIR included), SLUICE_BINDIR and
# SLUICE_LIBDIR (where the tree keeps its programs and its libraries).
set(_lib_dir "${SLUICE_INSTALL_ROOT}/${SLUICE_LIBDIR}")
file(GLOB _programs LIST_DIRECTORIES false "${SLUICE_INSTALL_ROOT}/${SLUICE_BINDIR}/*")

file(GET_RUNTIME_DEPENDENCIES
  EXECUTABLES ${_programs}
  RESOLVED_DEPENDENCIES_VAR _resolved
  UNRESOLVED_DEPENDENCIES_VAR _unresolved)
if(_unresolved)
  message(FATAL_ERROR "The installed programs need libraries nothing provides: ${_unresolved}")
endif()

find_program(_dpkg_query dpkg-query)
if(NOT _dpkg_query)
  message(FATAL_ERROR "runtime-packages.txt names Debian packages, and dpkg-query is not here")
endif()

set(_packages "")
foreach(_library IN LISTS _resolved)
  # The tree's own libraries (libsluice, libarrow) need no package.
  cmake_path(IS_PREFIX _lib_dir "${_library}" NORMALIZE _own)
  if(_own)
    continue()
  endif()
  # Under Debian's merged /usr a library is found as /lib/... or /usr/lib/..., through a symlink
  # or not, while dpkg knows one of those paths: try each.
  file(REAL_PATH "${_library}" _real)
  set(_candidates "")
  foreach(_path IN ITEMS "${_library}" "${_real}")
    list(APPEND _candidates "${_path}")
    if(_path MATCHES "^/usr(/.*)$")
      list(APPEND _candidates "${CMAKE_MATCH_1}")
    else()
      list(APPEND _candidates "/usr${_path}")
    endif()
  endforeach()
  set(_owner "")
  foreach(_path IN LISTS _candidates)
    execute_process(COMMAND "${_dpkg_query}" -S "${_path}"
      OUTPUT_VARIABLE _found RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    # "zlib1g:amd64: /lib/x86_64-linux-gnu/libz.so.1"
    if(_rc EQUAL 0 AND _found MATCHES "^([^:, ]+)")
      set(_owner "${CMAKE_MATCH_1}")
      break()
    endif()
  endforeach()
  if(NOT _owner)
    message(FATAL_ERROR "No Debian package owns ${_library}, which the installed programs load: "
                        "runtime-packages.txt can only name Debian packages")
  endif()
  list(APPEND _packages "${_owner}")
endforeach()

list(REMOVE_DUPLICATES _packages)
list(SORT _packages)
list(JOIN _packages "\n" _text)
set(_file "${SLUICE_INSTALL_ROOT}/share/sluice/runtime-packages.txt")
file(WRITE "${_file}" "${_text}\n")
message(STATUS "Runtime packages: ${_file} (${_packages})")

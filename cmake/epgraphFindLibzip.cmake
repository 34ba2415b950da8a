# epgraph: locate libzip and provide the imported target epgraph_deps::libzip.
# SPDX-License-Identifier: BSD-3-Clause
#
# Used by epgraph's own build and by the installed epgraphConfig.cmake.  If libzip is not
# found, epgraph_deps::libzip is simply not defined (never an error here).
#
# Order:
#   1. an existing target libzip::zip (e.g. the including project already ran
#      find_package(libzip) or built libzip itself) is reused;
#   2. otherwise zip.h / libzip are searched for, with pkg-config's answer as a hint.
#
# libzip's own CMake package is deliberately not searched: Debian 12's libzip-dev ships
# libzip-targets.cmake that ends with message(FATAL_ERROR) unless the separate zipcmp,
# zipmerge and ziptool packages are installed, and FATAL_ERROR cannot be made QUIET.
# Projects that want it can call find_package(libzip) before epgraph; step 1 then uses it.

if(TARGET epgraph_deps::libzip)
  return()
endif()

if(TARGET libzip::zip)
  add_library(epgraph_deps::libzip INTERFACE IMPORTED GLOBAL)
  set_target_properties(epgraph_deps::libzip PROPERTIES INTERFACE_LINK_LIBRARIES libzip::zip)
  return()
endif()

find_package(PkgConfig QUIET)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(EPGRAPH_PC_LIBZIP QUIET libzip)
endif()

find_path(EPGRAPH_LIBZIP_INCLUDE_DIR NAMES zip.h HINTS ${EPGRAPH_PC_LIBZIP_INCLUDE_DIRS})
find_library(EPGRAPH_LIBZIP_LIBRARY NAMES zip libzip HINTS ${EPGRAPH_PC_LIBZIP_LIBRARY_DIRS})
mark_as_advanced(EPGRAPH_LIBZIP_INCLUDE_DIR EPGRAPH_LIBZIP_LIBRARY)

if(EPGRAPH_LIBZIP_INCLUDE_DIR AND EPGRAPH_LIBZIP_LIBRARY)
  add_library(epgraph_deps::libzip UNKNOWN IMPORTED GLOBAL)
  set_target_properties(epgraph_deps::libzip PROPERTIES
    IMPORTED_LOCATION "${EPGRAPH_LIBZIP_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${EPGRAPH_LIBZIP_INCLUDE_DIR}")
  # zipconf.h may live in a separate (multiarch) directory.
  foreach(_epgraph_dir IN LISTS EPGRAPH_PC_LIBZIP_INCLUDE_DIRS)
    if(NOT _epgraph_dir STREQUAL EPGRAPH_LIBZIP_INCLUDE_DIR)
      set_property(TARGET epgraph_deps::libzip APPEND PROPERTY
                   INTERFACE_INCLUDE_DIRECTORIES "${_epgraph_dir}")
    endif()
  endforeach()
  unset(_epgraph_dir)
endif()

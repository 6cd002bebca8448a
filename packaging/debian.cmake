# SPDX-License-Identifier: MIT
# The Debian package (CPack DEB), included from packaging/CMakeLists.txt. `cpack -G DEB` in a build tree packages
# what that tree built and installs (cmake --install); `packaging/dev package` does it for the release preset.

set(STAGECRAFT_PACKAGE_MAINTAINER "Stagecraft developers <stagecraft@localhost>"
    CACHE STRING "Maintainer field of the Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME stagecraft)
set(CPACK_PACKAGE_VENDOR Stagecraft)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${STAGECRAFT_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "synthesize per-GPU execution traces of distributed LLM training")
set(CPACK_PACKAGE_DESCRIPTION
    "Stagecraft turns a model (GPT, Llama, mixture of experts) and a parallelism plan (data, tensor, sequence,
context, pipeline and expert parallelism, ZeRO 1-3 / FSDP, activation recompute, mixed precision) into the
program every GPU runs: its compute, the collectives and pipeline send/recv the sharding implies, and its
memory over the schedule. It exports Chakra execution traces that the ASTRA-sim simulator reads.

This package holds the command line `stagecraft` and the Qt explorer `stagecraft-gui`, the built-in model
presets and example configs (/usr/share/stagecraft) and the manual pages.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # stagecraft_<version>-<release>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Shared-library dependencies come from dpkg-shlibdeps (package dpkg-dev) when it is there: it reads the
# binaries' NEEDED entries and names the Debian packages and minimum versions. Without it, the same packages by
# hand (Debian 12 names, what the binaries' NEEDED entries resolve to). Fonts are not a library: the GUI draws no
# text without a font. The list is ONE string: CMake joins the parts of a multi-argument set() with ';', which
# once put ", ;libprotobuf32" into the Depends field. It is also written to CPackConfig.cmake (as a CPACK_
# variable), so that tests/packaging/check_deb.cmake checks it even on a machine where dpkg-shlibdeps is used.
string(CONCAT CPACK_STAGECRAFT_DEPENDS_BY_HAND
    "libc6, libstdc++6, libgcc-s1, libqt6core6, libqt6gui6, libqt6widgets6, libqt6charts6, libqt6concurrent6, "
    "libprotobuf32, libyaml-cpp0.7, libgvc6, libcgraph6, zlib1g, fonts-dejavu-core")
if(STAGECRAFT_TCMALLOC_LINKED) # the executables' allocator (top-level CMakeLists.txt)
    string(APPEND CPACK_STAGECRAFT_DEPENDS_BY_HAND ", libtcmalloc-minimal4")
endif()
# CPack's DEB generator runs dpkg-shlibdeps only on files that `file` (package file, not in a minimal Debian)
# calls ELF, and stops with "file utility is not available" without it: both are needed.
find_program(STAGECRAFT_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(STAGECRAFT_FILE file)
if(STAGECRAFT_DPKG_SHLIBDEPS AND STAGECRAFT_FILE)
    set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "fonts-dejavu-core")
else()
    message(STATUS "dpkg-shlibdeps or file not found (packages dpkg-dev, file): the .deb lists its dependencies "
                   "by hand")
    set(CPACK_DEBIAN_PACKAGE_DEPENDS "${CPACK_STAGECRAFT_DEPENDS_BY_HAND}")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-wayland") # the GUI's Wayland platform plugin; X11 (xcb) is in libqt6gui6

set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build/" "\\\\.swp$")

include(CPack)

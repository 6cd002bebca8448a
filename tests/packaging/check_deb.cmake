# SPDX-License-Identifier: MIT
# cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DCPACK=... -DVERSION=... -DGUI=ON|OFF -P check_deb.cmake
# Packages the build tree with CPack into WORK_DIR, unpacks the .deb into a temporary root and checks it: the files
# the package must install, the Depends field, and that the packaged binaries run from there.
cmake_minimum_required(VERSION 3.21) # a script sets no policies by itself: IN_LIST (CMP0057) needs this

function(fail message)
    message(FATAL_ERROR "packaging_deb: ${message}")
endfunction()

# Runs a command, fails unless it exits 0; stdout in <out>.
function(run out)
    execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc
        WORKING_DIRECTORY ${WORK_DIR})
    if(NOT _rc EQUAL 0)
        string(REPLACE ";" " " _command "${ARGN}")
        fail("`${_command}` exited with ${_rc}\n${_out}\n${_err}")
    endif()
    set(${out} "${_out}" PARENT_SCOPE)
endfunction()

# A Depends field as dpkg reads it: entries separated by ',', each one or more alternatives separated by '|', each a
# package name with an optional version relation. A stray ';' (a CMake list separator) or an empty entry makes
# dpkg reject the whole package ("invalid package name ';libprotobuf32'"), so each entry is checked here.
function(check_depends field what)
    if(field MATCHES ";")
        fail("${what} contains ';' (a CMake list joined into the field?): ${field}")
    endif()
    string(STRIP "${field}" _stripped)
    if(_stripped STREQUAL "")
        fail("${what} is empty")
    endif()
    string(REPLACE "," ";" _entries "${_stripped}")
    set(_names "")
    foreach(_entry IN LISTS _entries)
        string(REPLACE "|" ";" _alternatives "${_entry}")
        foreach(_alternative IN LISTS _alternatives)
            string(STRIP "${_alternative}" _alternative)
            if(NOT _alternative MATCHES "^([a-z0-9][a-z0-9+.-]+)( \\((<<|<=|=|>=|>>) [0-9A-Za-z.+~:-]+\\))?$")
                fail("${what} has an entry that is not a Debian package name: '${_alternative}' in: ${field}")
            endif()
            list(APPEND _names ${CMAKE_MATCH_1})
        endforeach()
    endforeach()
    set(${what}_names ${_names} PARENT_SCOPE)
endfunction()

# The by-hand list debian.cmake uses when dpkg-shlibdeps is missing, from the CPack config of this build tree
# (read in a function, so that the config's other CPACK_ variables stay out of this script).
function(read_by_hand_depends out)
    include(${BUILD_DIR}/CPackConfig.cmake)
    if(NOT DEFINED CPACK_STAGECRAFT_DEPENDS_BY_HAND)
        fail("${BUILD_DIR}/CPackConfig.cmake has no CPACK_STAGECRAFT_DEPENDS_BY_HAND")
    endif()
    set(${out} "${CPACK_STAGECRAFT_DEPENDS_BY_HAND}" PARENT_SCOPE)
    set(${out}_shlibdeps "${CPACK_DEBIAN_PACKAGE_SHLIBDEPS}" PARENT_SCOPE)
endfunction()

find_program(DPKG_DEB dpkg-deb)
if(NOT DPKG_DEB)
    fail("dpkg-deb not found")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/root)

# 1. Package. cpack installs the build tree (cmake --install) into its own staging directory under WORK_DIR.
run(_ ${CPACK} -G DEB --config ${BUILD_DIR}/CPackConfig.cmake -B ${WORK_DIR})
file(GLOB _debs ${WORK_DIR}/*.deb)
list(LENGTH _debs _count)
if(NOT _count EQUAL 1)
    fail("expected one .deb in ${WORK_DIR}, found ${_count}: ${_debs}")
endif()
get_filename_component(_deb_name ${_debs} NAME)
if(NOT _deb_name MATCHES "^stagecraft_${VERSION}-1_[a-z0-9]+\\.deb$")
    fail("package file name ${_deb_name} is not stagecraft_${VERSION}-1_<arch>.deb")
endif()

# 2. Control fields. The binaries link Qt Widgets and Charts, yaml-cpp 0.7, protobuf 3.21 (libprotobuf32) and
#    Graphviz (libgvc6, libcgraph6); the GUI needs a font (fonts-dejavu-core).
run(_package ${DPKG_DEB} -f ${_debs} Package)
run(_version ${DPKG_DEB} -f ${_debs} Version)
run(_depends ${DPKG_DEB} -f ${_debs} Depends)
string(STRIP "${_package}" _package)
string(STRIP "${_version}" _version)
string(STRIP "${_depends}" _depends) # dpkg-deb ends the field with a newline, which hid a last entry from the match
if(NOT _package STREQUAL "stagecraft" OR NOT _version STREQUAL "${VERSION}-1")
    fail("control says Package '${_package}' Version '${_version}', expected stagecraft ${VERSION}-1")
endif()
check_depends("${_depends}" Depends)
# The by-hand list is checked on every machine, not only on one without dpkg-dev, where it is used; where
# dpkg-shlibdeps computed the field, it must name no package the by-hand list lacks (the list would be stale).
read_by_hand_depends(_by_hand)
check_depends("${_by_hand}" by_hand)
if(_by_hand_shlibdeps)
    foreach(_name IN LISTS Depends_names)
        if(NOT _name IN_LIST by_hand_names)
            fail("dpkg-shlibdeps names ${_name}, which the by-hand list in packaging/debian.cmake lacks: ${_by_hand}")
        endif()
    endforeach()
endif()
foreach(_dep libqt6widgets6 libqt6charts6 libyaml-cpp0.7 libprotobuf32 libgvc6 libcgraph6 fonts-dejavu-core)
    if(NOT _depends MATCHES "(^|[ ,])${_dep}([ ,(]|$)")
        fail("Depends lacks ${_dep}: ${_depends}")
    endif()
endforeach()

# 3. Contents.
run(_ ${DPKG_DEB} -x ${_debs} ${WORK_DIR}/root)
set(_root ${WORK_DIR}/root)
set(_expected usr/bin/stagecraft usr/share/man/man1/stagecraft.1.gz usr/share/applications/stagecraft-gui.desktop
    usr/share/icons/hicolor/scalable/apps/stagecraft.svg)
if(GUI)
    list(APPEND _expected usr/bin/stagecraft-gui usr/share/man/man1/stagecraft-gui.1.gz)
endif()
file(GLOB _presets RELATIVE ${SOURCE_DIR}/resources/presets ${SOURCE_DIR}/resources/presets/*.yaml)
file(GLOB _examples RELATIVE ${SOURCE_DIR}/resources/examples ${SOURCE_DIR}/resources/examples/*.yaml)
if(NOT _presets OR NOT _examples)
    fail("no presets or examples in ${SOURCE_DIR}/resources")
endif()
foreach(_f ${_presets})
    list(APPEND _expected usr/share/stagecraft/presets/${_f})
endforeach()
foreach(_f ${_examples})
    list(APPEND _expected usr/share/stagecraft/examples/${_f})
endforeach()
foreach(_f ${_expected})
    if(NOT EXISTS ${_root}/${_f})
        fail("the package does not install /${_f}")
    endif()
endforeach()
file(SIZE ${_root}/usr/share/man/man1/stagecraft.1.gz _man_size)
if(_man_size LESS 1000)
    fail("stagecraft.1.gz is only ${_man_size} bytes")
endif()

# 4. The packaged binaries run from the unpacked root (nothing of the build or source tree needed).
set(ENV{QT_QPA_PLATFORM} offscreen)
run(_presets_out ${_root}/usr/bin/stagecraft presets)
foreach(_f ${_presets})
    string(REGEX REPLACE "\\.yaml$" "" _name ${_f})
    if(NOT _presets_out MATCHES "(^|\n)${_name} ")
        fail("`stagecraft presets` does not list ${_name}:\n${_presets_out}")
    endif()
endforeach()
if(NOT _presets_out MATCHES "(^|\n)llama3-70b ")
    fail("`stagecraft presets` does not list llama3-70b")
endif()
# tiny: Llama, 2 layers, h 256, ffn 512, 8 heads, 4 KV heads, vocab 1024, untied. By hand (as in
# tests/core/tst_model.cpp): per layer q, o 2*256*256 + k, v 2*256*128 + MLP 3*256*512 + 2 norms 2*256 = 590,336;
# 2 layers 1,180,672 + embedding and head 2*1024*256 = 524,288 + final norm 256 = 1,705,216.
run(_report ${_root}/usr/bin/stagecraft report tiny --json)
string(JSON _params GET "${_report}" params)
if(NOT _params EQUAL 1705216)
    fail("`stagecraft report tiny --json` gives params ${_params}, expected 1705216")
endif()
foreach(_example ${_examples})
    run(_ ${_root}/usr/bin/stagecraft report ${_root}/usr/share/stagecraft/examples/${_example} --json)
endforeach()
if(GUI)
    run(_gui_version ${_root}/usr/bin/stagecraft-gui --version)
    if(NOT _gui_version MATCHES "${VERSION}")
        fail("`stagecraft-gui --version` prints '${_gui_version}', expected version ${VERSION}")
    endif()
    run(_ ${_root}/usr/bin/stagecraft-gui --check-config ${_root}/usr/share/stagecraft/presets/llama3-70b.yaml)
    # Without a display the GUI says what to do and exits 2, instead of aborting inside Qt (xcb, SIGABRT).
    unset(ENV{QT_QPA_PLATFORM})
    unset(ENV{DISPLAY})
    unset(ENV{WAYLAND_DISPLAY})
    execute_process(COMMAND ${_root}/usr/bin/stagecraft-gui tiny OUTPUT_VARIABLE _out ERROR_VARIABLE _err
        RESULT_VARIABLE _rc WORKING_DIRECTORY ${WORK_DIR})
    if(NOT _rc EQUAL 2 OR NOT _err MATCHES "no display" OR NOT _err MATCHES "xvfb-run")
        fail("`stagecraft-gui tiny` without a display: exit ${_rc}, expected 2 and a hint naming xvfb-run:\n${_err}")
    endif()
endif()

file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "packaging_deb: ${_deb_name} ok; Depends: ${_depends}")

# SPDX-License-Identifier: MIT
# Man pages generated from the programs' own --help and --version by help2man, so they cannot drift from them.
#
# Two roles in one file (like core/embedyaml.cmake):
#  - included from packaging/CMakeLists.txt: build steps that write <build>/man/stagecraft.1(.gz) and
#    stagecraft-gui.1(.gz) whenever a binary changes, and their installation to share/man/man1;
#  - run as a script (cmake -DPROGRAM=... -DOUTPUT=... -DNAME=... [-DSUBCOMMANDS=ON] -P manpages.cmake): writes one
#    page. With SUBCOMMANDS, the page gets a COMMANDS section with every subcommand's --help.

if(CMAKE_SCRIPT_MODE_FILE)
    get_filename_component(_dir "${PROGRAM}" DIRECTORY)
    get_filename_component(_program "${PROGRAM}" NAME)
    # Run the program by its bare name, found on PATH, so that help texts that print argv[0] show the name.
    set(ENV{PATH} "${_dir}:$ENV{PATH}")
    set(ENV{QT_QPA_PLATFORM} offscreen) # the GUI's --help needs no display, but never let it look for one
    set(ENV{LC_ALL} C.UTF-8)

    # roff-safe text: backslashes and minus signs escaped, no line starting with a control character.
    function(_roff_text text out)
        string(REPLACE "\\" "\\e" text "${text}")
        string(REPLACE "-" "\\-" text "${text}")
        string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
        set(${out} "${text}" PARENT_SCOPE)
    endfunction()

    set(_include "${OUTPUT}.h2m")
    set(_text "")
    if(SUBCOMMANDS)
        execute_process(COMMAND ${_program} --help OUTPUT_VARIABLE _help RESULT_VARIABLE _rc)
        if(NOT _rc EQUAL 0)
            message(FATAL_ERROR "${_program} --help failed (${_rc})")
        endif()
        # CLI11 lists subcommands under "SUBCOMMANDS:" (or "Subcommands:"), one per line: "  name   description".
        string(REGEX MATCH "[Ss][Uu][Bb][Cc][Oo][Mm][Mm][Aa][Nn][Dd][Ss]:\n(( +[^\n]*\n)+)" _block "${_help}")
        string(REGEX MATCHALL "\n +[a-z][a-z0-9-]*" _names "\n${CMAKE_MATCH_1}")
        set(_commands "")
        foreach(_name ${_names})
            string(STRIP "${_name}" _name)
            list(APPEND _commands ${_name})
        endforeach()
        if(NOT _commands)
            message(FATAL_ERROR "no subcommands found in `${_program} --help`:\n${_help}")
        endif()
        string(APPEND _text "[COMMANDS]\n")
        foreach(_command ${_commands})
            execute_process(COMMAND ${_program} ${_command} --help OUTPUT_VARIABLE _sub RESULT_VARIABLE _rc)
            if(NOT _rc EQUAL 0)
                message(FATAL_ERROR "${_program} ${_command} --help failed (${_rc})")
            endif()
            _roff_text("${_sub}" _sub)
            string(APPEND _text ".SS \"${_program} ${_command}\"\n.nf\n${_sub}.fi\n")
        endforeach()
    endif()
    if(FILES_SECTION)
        string(APPEND _text "[FILES]\n.TP\n.I /usr/share/stagecraft/presets/\n"
            "The built-in model presets (also built into the programs), to copy and edit.\n"
            ".TP\n.I /usr/share/stagecraft/examples/\n"
            "Complete commented configs: dense 3D parallelism, FSDP, mixture of experts with expert parallelism, "
            "long context with context parallelism.\n")
    endif()
    if(SEE_ALSO)
        string(APPEND _text "[SEE ALSO]\n${SEE_ALSO}\n")
    endif()
    file(WRITE "${_include}" "${_text}")

    execute_process(COMMAND "${HELP2MAN}" --no-info --section=1 "--name=${NAME}" "--source=Stagecraft"
                "--manual=User Commands" "--include=${_include}" "--output=${OUTPUT}.tmp" ${_program}
        RESULT_VARIABLE _rc ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "help2man ${_program} failed (${_rc}): ${_err}")
    endif()
    file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
    # Debian installs man pages gzip-compressed; -n leaves out the time stamp, so equal pages give equal bytes.
    execute_process(COMMAND "${GZIP}" -9 -n -c "${OUTPUT}" OUTPUT_FILE "${OUTPUT}.gz" RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR "gzip ${OUTPUT} failed (${_rc})")
    endif()
    return()
endif()

find_program(STAGECRAFT_HELP2MAN help2man)
find_program(STAGECRAFT_GZIP gzip)
if(NOT STAGECRAFT_HELP2MAN OR NOT STAGECRAFT_GZIP)
    message(STATUS "help2man or gzip not found: no man pages (Debian packages help2man, gzip)")
    return()
endif()

set(_man_dir ${CMAKE_BINARY_DIR}/man)
add_custom_target(manpages ALL)
# _stagecraft_man_page(<target> <one-line description> [SUBCOMMANDS] [FILES_SECTION] [SEE_ALSO text])
function(_stagecraft_man_page target name)
    cmake_parse_arguments(ARG "SUBCOMMANDS;FILES_SECTION" "SEE_ALSO" "" ${ARGN})
    set(_page ${_man_dir}/${target}.1)
    add_custom_command(OUTPUT ${_page} ${_page}.gz
        COMMAND ${CMAKE_COMMAND} -E make_directory ${_man_dir}
        COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${target}> -DOUTPUT=${_page} "-DNAME=${name}"
            -DHELP2MAN=${STAGECRAFT_HELP2MAN} -DGZIP=${STAGECRAFT_GZIP} -DSUBCOMMANDS=${ARG_SUBCOMMANDS}
            -DFILES_SECTION=${ARG_FILES_SECTION} "-DSEE_ALSO=${ARG_SEE_ALSO}" -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
        DEPENDS ${target} ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
        COMMENT "Generating the man page ${target}.1 from ${target} --help"
        VERBATIM)
    install(FILES ${_page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
    # One target per page, so that a page waits only for its own program.
    add_custom_target(manpage-${target} DEPENDS ${_page}.gz)
    add_dependencies(manpages manpage-${target})
endfunction()

_stagecraft_man_page(stagecraft "synthesize per-GPU execution traces of distributed LLM training" SUBCOMMANDS
    FILES_SECTION SEE_ALSO ".BR stagecraft\\-gui (1)")
if(TARGET stagecraft-gui)
    _stagecraft_man_page(stagecraft-gui "explore the per-GPU programs, memory and communication of LLM training plans"
        FILES_SECTION SEE_ALSO ".BR stagecraft (1)")
endif()

# SPDX-License-Identifier: MIT
# core_chakra: our Chakra ET schema (chakra/et_def.proto, C++ generated at build time, never committed),
# the trace model, writer, reader and inspect. Included from core/CMakeLists.txt, so
# CMAKE_CURRENT_SOURCE_DIR is core/ and the generated header is "chakra/et_def.pb.h".
file(GLOB _chakra_sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/chakra/*.cpp ${CMAKE_CURRENT_SOURCE_DIR}/chakra/*.h)
add_library(core_chakra STATIC ${_chakra_sources} ${CMAKE_CURRENT_SOURCE_DIR}/chakra/et_def.proto)

set(_chakra_gen_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
file(MAKE_DIRECTORY ${_chakra_gen_dir})
protobuf_generate(TARGET core_chakra LANGUAGE cpp PROTOC_OUT_DIR ${_chakra_gen_dir} OUT_VAR _chakra_generated)
# Generated code is not ours: no warnings from it (CI builds with -Werror).
set_source_files_properties(${_chakra_generated} PROPERTIES COMPILE_OPTIONS "-w")

# The generated header stays private: public headers of core_chakra expose no protobuf types.
target_include_directories(core_chakra PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} PRIVATE ${_chakra_gen_dir})
target_link_libraries(core_chakra PUBLIC protobuf::libprotobuf nlohmann_json::nlohmann_json core_output PRIVATE stagecraft_warnings)
set_target_properties(core_chakra PROPERTIES AUTOMOC OFF AUTOUIC OFF AUTORCC OFF POSITION_INDEPENDENT_CODE ON)

# ccsim_embedded_presets(ROOT OUT_VAR): the build rule that compiles topologies/presets/*.json into
# a C++ source (cmake/EmbedPresets.cmake writes it), for the top-level build and the standalone
# fuzz build alike. OUT_VAR receives the generated source's path.
function(ccsim_embedded_presets root out_var)
  file(GLOB files CONFIGURE_DEPENDS ${root}/topologies/presets/*.json)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/generated/embedded_presets.cpp)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DFILES="${files}" -P ${root}/cmake/EmbedPresets.cmake
    DEPENDS ${files} ${root}/cmake/EmbedPresets.cmake
    COMMENT "Embedding topology presets")
  set(${out_var} ${out} PARENT_SCOPE)
endfunction()

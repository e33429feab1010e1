# Per-target compile settings, applied with dynet_lite_set_options(target).
# No global CMAKE_CXX_FLAGS edits: everything goes through target properties.
function(dynet_lite_set_options target)
  target_compile_features(${target} PUBLIC cxx_std_17)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra>")
    if(DYNET_LITE_NATIVE)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-march=native>)
    endif()
  endif()
  if(DYNET_LITE_SANITIZE)
    # A list ("address;undefined") or a comma-separated string; every report is
    # fatal (-fno-sanitize-recover), so that a test with a report fails.
    string(REPLACE ";" "," sanitizers "${DYNET_LITE_SANITIZE}")
    target_compile_options(${target} PUBLIC
      "$<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${sanitizers};-fno-sanitize-recover=all;-fno-omit-frame-pointer>")
    target_link_options(${target} PUBLIC -fsanitize=${sanitizers})
  endif()
endfunction()

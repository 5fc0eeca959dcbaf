# cmake --install build --prefix P: everything a user of weft needs outside the
# source tree. P/lib/weft is a tree the tools recognise as their own (bin/,
# firmware/, boards/, clusters/, qemu/, data/), so they find their firmware
# through the install; P/bin holds links to the tools; P/lib/libweft.a and
# P/include (weft/abi, and the driver's headers under weft/host) serve
# find_package(weft) (P/lib/cmake/weft) and pkg-config (P/lib/pkgconfig/weft.pc).
set(WEFT_TOOLS lib/weft)
install(TARGETS weft weft-bridge weft-check-firmware RUNTIME DESTINATION ${WEFT_TOOLS}/bin)
install(DIRECTORY ${CMAKE_BINARY_DIR}/firmware/ DESTINATION ${WEFT_TOOLS}/firmware)
install(DIRECTORY ${CMAKE_BINARY_DIR}/boards/ DESTINATION ${WEFT_TOOLS}/boards FILES_MATCHING PATTERN "*.dtb")
install(DIRECTORY clusters qemu data DESTINATION ${WEFT_TOOLS})
install(PROGRAMS scripts/flash-and-run DESTINATION ${WEFT_TOOLS}/scripts)
install(CODE "
  file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin\")
  foreach(tool weft weft-bridge)
    file(CREATE_LINK ../${WEFT_TOOLS}/bin/\${tool} \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/\${tool}\" SYMBOLIC)
  endforeach()")

install(TARGETS weftlib ARCHIVE DESTINATION lib)
install(DIRECTORY include/weft DESTINATION include)
install(DIRECTORY host/ DESTINATION include/weft/host FILES_MATCHING PATTERN "*.h")
install(FILES LICENSE DESTINATION share/doc/weft)

configure_file(cmake/install/weftConfig.cmake.in ${CMAKE_BINARY_DIR}/install/weftConfig.cmake @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/install/weftConfig.cmake ${CMAKE_BINARY_DIR}/install/weftConfigVersion.cmake
  DESTINATION lib/cmake/weft)
# The prefix is only known at install time.
install(CODE "
  file(READ \"${CMAKE_SOURCE_DIR}/cmake/install/weft.pc.in\" pc)
  string(REPLACE \"__PREFIX__\" \"\${CMAKE_INSTALL_PREFIX}\" pc \"\${pc}\")
  string(REPLACE \"__VERSION__\" \"${PROJECT_VERSION}\" pc \"\${pc}\")
  file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/pkgconfig/weft.pc\" \"\${pc}\")")

# Man pages from the CLI's help, and the bash completion, made at install.
install(CODE "
  execute_process(COMMAND ${CMAKE_SOURCE_DIR}/scripts/gen-man $<TARGET_FILE:weft>
                          \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/share/man/man1\" COMMAND_ERROR_IS_FATAL ANY)
  file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions\")
  execute_process(COMMAND $<TARGET_FILE:weft> completion
                  OUTPUT_FILE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions/weft\"
                  COMMAND_ERROR_IS_FATAL ANY)")

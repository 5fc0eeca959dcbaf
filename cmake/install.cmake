# cmake --install build --prefix P: everything a user of weft needs outside
# the source tree, laid out as Debian lays out a package:
#   P/bin                weft, weft-bridge, weft-check-firmware (stripped), weft-flash-and-run
#   P/share/weft         what is the same on every host: boards/*.dtb,
#                        firmware/<board>/ (images, kernels, and sdk/ for
#                        building kernels of one's own), clusters/, qemu/, data/
#   P/lib/libweft_*.a (a library per layer), P/include/weft/{abi,host,firmware}: the public headers only
#   P/lib/cmake/weft     find_package(weft): weft::weft (install(EXPORT)),
#                        weft_add_kernel() and weft_add_firmware_test()
#   P/lib/pkgconfig/weft.pc, man pages, bash completion.
# host/driver/paths.h finds a prefix laid out so as a weft tree.
set(WEFT_DATA share/weft)
install(TARGETS weft weft-bridge weft-check-firmware RUNTIME DESTINATION bin)
install(PROGRAMS scripts/flash-and-run DESTINATION bin RENAME weft-flash-and-run)
install(DIRECTORY ${CMAKE_BINARY_DIR}/firmware/ DESTINATION ${WEFT_DATA}/firmware)
install(DIRECTORY ${CMAKE_BINARY_DIR}/boards/ DESTINATION ${WEFT_DATA}/boards FILES_MATCHING PATTERN "*.dtb")
install(DIRECTORY clusters qemu data DESTINATION ${WEFT_DATA})
install(FILES LICENSE CHANGELOG.md DESTINATION share/doc/weft)

# The library, a static archive per layer, exported with what it needs;
# weft::weft is all of them.
set_target_properties(weftlib PROPERTIES EXPORT_NAME weft)
set(WEFT_LIBRARIES weft_common weft_board weft_driver weft_transport weft_ccl weft_tensor weft_plot)
install(TARGETS weftlib ${WEFT_LIBRARIES} EXPORT weftTargets ARCHIVE DESTINATION lib)
install(EXPORT weftTargets NAMESPACE weft:: DESTINATION lib/cmake/weft)
configure_file(cmake/install/weftConfig.cmake.in ${CMAKE_BINARY_DIR}/install/weftConfig.cmake @ONLY)
include(CMakePackageConfigHelpers)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/install/weftConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)  # 0.x: deprecate, never break
install(FILES ${CMAKE_BINARY_DIR}/install/weftConfig.cmake ${CMAKE_BINARY_DIR}/install/weftConfigVersion.cmake
  cmake/install/weftFirmware.cmake DESTINATION lib/cmake/weft)

# The public headers: those `header` includes from host/, found by the
# compiler itself, so nothing private is installed and nothing public is
# missed. weft.h's, and below the host-model machine's.
function(weft_install_headers_of header)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -std=gnu++20 -MM -MT x -I${CMAKE_SOURCE_DIR}/include
                          -I${CMAKE_SOURCE_DIR}/host -I${CMAKE_SOURCE_DIR}/firmware -I${CMAKE_SOURCE_DIR}/boards/host
                          ${CMAKE_SOURCE_DIR}/${header}
                  OUTPUT_VARIABLE deps RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cannot list the headers ${header} includes")
  endif()
  string(REGEX REPLACE "\\\\\n" " " deps "${deps}")
  string(REGEX MATCHALL "[^ \n:]+\\.h" headers "${deps}")
  foreach(h ${headers})
    file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${h})
    if(rel MATCHES "^host/(.*)/[^/]+$")
      install(FILES ${h} DESTINATION include/weft/host/${CMAKE_MATCH_1})
    elseif(rel MATCHES "^host/[^/]+$")
      install(FILES ${h} DESTINATION include/weft/host)
    endif()
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${headers})
endfunction()
weft_install_headers_of(host/weft.h)
install(DIRECTORY include/weft DESTINATION include)
# The firmware's headers, for kernels of one's own (firmware/kernels/kernel.h
# and the HAL they use), and the host board's, for firmware tests on the host.
install(DIRECTORY firmware/ DESTINATION include/weft/firmware FILES_MATCHING PATTERN "*.h")
install(FILES boards/host/host_board.h DESTINATION include/weft/firmware)
# Firmware logic on the host board's HAL (weft_add_firmware_test), with the
# EDM's and the fabric's worker side.
set_target_properties(weft_fw_host PROPERTIES EXPORT_NAME firmware_host)
set_target_properties(weft_fw_host_edm PROPERTIES EXPORT_NAME firmware_host_edm)
set_target_properties(weft_fw_host_fabric PROPERTIES EXPORT_NAME firmware_host_fabric)
install(TARGETS weft_fw_host weft_fw_host_edm weft_fw_host_fabric EXPORT weftTargets ARCHIVE DESTINATION lib)

# The host-model machine (weft::model, host/model/host_cluster.h): chips in
# host memory running weft's own kernels built for the host board, with the
# devices library between them, for a user's tests that run collectives
# through the same runner without QEMU.
set_target_properties(weft_devices PROPERTIES EXPORT_NAME devices)
set_target_properties(weft_fw_host_kernels PROPERTIES EXPORT_NAME firmware_host_kernels)
set_target_properties(weft_model PROPERTIES EXPORT_NAME model)
install(TARGETS weft_devices weft_fw_host_kernels weft_model EXPORT weftTargets ARCHIVE DESTINATION lib)
weft_install_headers_of(host/model/host_cluster.h)

# The prefix is only known at install time.
install(CODE "
  file(READ \"${CMAKE_SOURCE_DIR}/cmake/install/weft.pc.in\" pc)
  string(REPLACE \"__PREFIX__\" \"\${CMAKE_INSTALL_PREFIX}\" pc \"\${pc}\")
  string(REPLACE \"__VERSION__\" \"${PROJECT_VERSION}\" pc \"\${pc}\")
  file(WRITE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/pkgconfig/weft.pc\" \"\${pc}\")")

# Debug information stays in the build tree: the installed tools and library
# are stripped of it (the firmware keeps its own: fault reports name source lines).
install(CODE "
  foreach(f bin/weft bin/weft-bridge bin/weft-check-firmware lib/libweft_common.a lib/libweft_board.a
            lib/libweft_driver.a lib/libweft_transport.a lib/libweft_ccl.a lib/libweft_tensor.a lib/libweft_plot.a lib/libweft_fw_host.a
            lib/libweft_fw_host_edm.a lib/libweft_fw_host_fabric.a lib/libweft_devices.a lib/libweft_fw_host_kernels.a
            lib/libweft_model.a)
    execute_process(COMMAND ${CMAKE_STRIP} --strip-debug \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/\${f}\"
                    COMMAND_ERROR_IS_FATAL ANY)
  endforeach()")

# Man pages from the CLI's help, and the bash completion, made at install.
install(CODE "
  execute_process(COMMAND ${CMAKE_SOURCE_DIR}/scripts/gen-man $<TARGET_FILE:weft>
                          \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/share/man/man1\" COMMAND_ERROR_IS_FATAL ANY)
  file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions\")
  execute_process(COMMAND $<TARGET_FILE:weft> completion
                  OUTPUT_FILE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions/weft\"
                  COMMAND_ERROR_IS_FATAL ANY)")

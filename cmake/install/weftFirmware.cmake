# Firmware of one's own against an installed weft (included by find_package(weft)).
#
#   weft_add_kernel(NAME SOURCES a.cpp ... [BOARD qemu-virt] [INCLUDES dir ...])
#     NAME.elf in this build directory: a kernel for the board's chip, built
#     with the RISC-V cross compiler over the board's SDK (share/weft/firmware/
#     <board>/sdk) exactly as weft builds its own; run it with
#     `weft launch path/to/NAME.elf --core N`. Target NAME.
#   weft_add_firmware_test(NAME SOURCES a.cpp ...)
#     A host executable (a CMocka test, say) of firmware logic over the host
#     board's HAL (weft::firmware_host): the same source, stepped on the host.
include_guard(GLOBAL)

function(weft_add_kernel name)
  cmake_parse_arguments(K "" "BOARD" "SOURCES;INCLUDES" ${ARGN})
  if(NOT K_SOURCES)
    message(FATAL_ERROR "weft_add_kernel(${name}): no SOURCES")
  endif()
  if(NOT K_BOARD)
    set(K_BOARD qemu-virt)
  endif()
  set(sdk ${WEFT_DATA_DIR}/firmware/${K_BOARD}/sdk)
  if(NOT EXISTS ${sdk}/flags.cmake)
    file(GLOB boards RELATIVE ${WEFT_DATA_DIR}/firmware ${WEFT_DATA_DIR}/firmware/*)
    message(FATAL_ERROR "weft_add_kernel(${name}): this weft has no SDK for board '${K_BOARD}' (boards: ${boards})")
  endif()
  include(${sdk}/flags.cmake)
  find_program(WEFT_RISCV_CXX riscv64-unknown-elf-g++ REQUIRED)
  set(arch -march=${WEFT_SDK_ISA} -misa-spec=2.2 -mabi=${WEFT_SDK_ABI} -mcmodel=medany)
  set(flags ${arch} -std=gnu++20 -O2 -flto -g -ffreestanding -fno-builtin-printf -ffunction-sections
    -fdata-sections -mno-relax -fno-stack-protector -fno-common -fno-asynchronous-unwind-tables
    -fno-unwind-tables -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit -Wall -Wextra)
  set(includes -I${WEFT_PREFIX}/include/weft/firmware -I${WEFT_PREFIX}/include -I${sdk}/include
    -isystem ${WEFT_SDK_PICOLIBC}/include)
  foreach(dir ${K_INCLUDES})
    get_filename_component(dir ${dir} ABSOLUTE)
    list(APPEND includes -I${dir})
  endforeach()
  set(sources)
  foreach(src ${K_SOURCES})
    get_filename_component(src ${src} ABSOLUTE)
    list(APPEND sources ${src})
  endforeach()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}.elf)
  add_custom_command(OUTPUT ${out}
    COMMAND ${WEFT_RISCV_CXX} ${flags} ${includes} ${sources} ${sdk}/lib/kernel_entry.cpp.obj
            ${sdk}/lib/layout_record.cpp.obj -nostdlib -nostartfiles -Wl,--gc-sections -Wl,--no-relax
            -Wl,--build-id=none -Wl,--no-warn-rwx-segments -Wl,-q -T ${sdk}/kernel.ld -L${sdk}/lib
            -lweft_kernel -lweft_rt -L${WEFT_SDK_PICOLIBC}/lib/${WEFT_SDK_ISA}/${WEFT_SDK_ABI} -lc -lgcc -o ${out}
    DEPENDS ${sources} ${sdk}/kernel.ld ${sdk}/lib/libweft_rt.a ${sdk}/lib/libweft_kernel.a
    COMMENT "weft kernel ${name}.elf for ${K_BOARD}"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${out})
endfunction()

function(weft_add_firmware_test name)
  cmake_parse_arguments(T "" "" "SOURCES" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE weft::firmware_host)
endfunction()

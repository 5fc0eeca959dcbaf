# Boards and chips. A board is a folder boards/<board>/ whose board.dts names
# its chip in the root's `weft,chip` property; the chip is chips/<chip>/: its
# devicetree include (chip.dtsi, included as "<chip>/chip.dtsi") and its HAL
# backend (hal/). A board has its DTB; the firmware is built per chip and
# shared by the chip's boards. Adding a board is adding its folder and a line
# in WEFT_BOARDS.

set(WEFT_CHIPS_DIR ${CMAKE_SOURCE_DIR}/chips)
include(ExternalProject)

# The chip boards/<board>/board.dts names. Read at configure time (the HAL
# sources depend on it), so editing board.dts re-runs the configuration.
function(weft_board_chip board out)
  set(dts ${CMAKE_SOURCE_DIR}/boards/${board}/board.dts)
  if(NOT EXISTS ${dts})
    message(FATAL_ERROR "board ${board} (WEFT_BOARDS): there is no ${dts}")
  endif()
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${dts})
  file(STRINGS ${dts} lines REGEX "^[ \t]*weft,chip[ \t]*=")
  string(REGEX MATCH "weft,chip[ \t]*=[ \t]*\"([^\"]+)\"" match "${lines}")
  if(NOT match)
    message(FATAL_ERROR "${dts} names no chip: its root node needs weft,chip = \"<chip>\"; (a folder of ${WEFT_CHIPS_DIR})")
  endif()
  set(chip ${CMAKE_MATCH_1})
  if(NOT EXISTS ${WEFT_CHIPS_DIR}/${chip}/chip.dtsi)
    message(FATAL_ERROR "${dts} names chip '${chip}', but there is no ${WEFT_CHIPS_DIR}/${chip}/chip.dtsi")
  endif()
  set(${out} ${chip} PARENT_SCOPE)
endfunction()

# build/boards/<board>/board.dtb, rebuilt when the board's board.dts or its
# chip's devicetree includes change. Target board-dtb-<board>.
function(weft_board_dtb board chip)
  set(dir ${CMAKE_BINARY_DIR}/boards/${board})
  set(dts ${CMAKE_SOURCE_DIR}/boards/${board}/board.dts)
  file(GLOB chip_includes CONFIGURE_DEPENDS ${WEFT_CHIPS_DIR}/${chip}/*.dtsi)
  add_custom_command(OUTPUT ${dir}/board.dtb
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${DTC} -q -i ${WEFT_CHIPS_DIR} -I dts -O dtb -o ${dir}/board.dtb ${dts}
    DEPENDS ${dts} ${chip_includes}
    COMMENT "dtc ${board}/board.dts (chip ${chip})")
  add_custom_target(board-dtb-${board} DEPENDS ${dir}/board.dtb)
endfunction()

# The firmware's view of a chip, generated from the DTBs of the boards that
# carry it (they must agree on everything but their ports):
# build/generated/<chip>/weft/board_layout.h. Target board-header-<chip>.
# Replaced only when its text changes, so that relinking the generator (any
# change to libweft) does not rebuild the chip's firmware.
function(weft_chip_header chip)
  set(dir ${CMAKE_BINARY_DIR}/generated/${chip}/weft)
  set(dtbs)
  foreach(board ${ARGN})
    list(APPEND dtbs ${CMAKE_BINARY_DIR}/boards/${board}/board.dtb)
  endforeach()
  add_custom_command(OUTPUT ${dir}/board_layout.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND weft-board-header ${dir}/board_layout.h.new ${dtbs}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${dir}/board_layout.h.new ${dir}/board_layout.h
    DEPENDS weft-board-header ${dtbs}
    COMMENT "board_layout.h for chip ${chip}")
  add_custom_target(board-header-${chip} DEPENDS ${dir}/board_layout.h)
endfunction()

# A string property of chips/<chip>/chip.dtsi's chip node (`name = "value";`),
# or `default` if it has none.
function(weft_chip_property chip name out default)
  set(dtsi ${WEFT_CHIPS_DIR}/${chip}/chip.dtsi)
  file(STRINGS ${dtsi} lines REGEX "^[ \t]*${name}[ \t]*=")
  string(REGEX MATCH "${name}[ \t]*=[ \t]*\"([^\"]+)\"" match "${lines}")
  if(match)
    set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
  elseif(default STREQUAL "REQUIRED")
    message(FATAL_ERROR "${dtsi}: the chip node needs ${name} = \"...\";")
  else()
    set(${out} ${default} PARENT_SCOPE)
  endif()
endfunction()

# The chip's firmware, cross-built over its HAL into build/firmware/<chip>/
# (boot.elf, kernels/, test-kernels/, ...), which every board of the chip
# runs. Target firmware-<chip>.
# The firmware's compiler launcher: ccache when installed.
if(CCACHE)
  set(WEFT_FIRMWARE_LAUNCHER ${CCACHE})
endif()

function(weft_chip_firmware chip)
  # The chip's cores (their ISA and ABI, which pick picolibc's library) and
  # the chip whose HAL backend it uses (its own unless it shares one).
  weft_chip_property(${chip} isa isa REQUIRED)
  weft_chip_property(${chip} abi abi REQUIRED)
  weft_chip_property(${chip} hal hal ${chip})
  set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${WEFT_CHIPS_DIR}/${chip}/chip.dtsi)
  # Rebuilt when a source it compiles changes (not on every build: a no-op
  # make stays a no-op); its output goes to a log shown only on failure.
  file(GLOB_RECURSE firmware_sources CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/firmware/*.cpp ${CMAKE_SOURCE_DIR}/firmware/*.h ${CMAKE_SOURCE_DIR}/firmware/*.S
    ${CMAKE_SOURCE_DIR}/firmware/CMakeLists.txt ${CMAKE_SOURCE_DIR}/include/*.h ${CMAKE_SOURCE_DIR}/linker/*
    ${WEFT_CHIPS_DIR}/${hal}/hal/* ${CMAKE_SOURCE_DIR}/tests/firmware/*.cpp ${CMAKE_SOURCE_DIR}/tests/firmware/*.h
    ${CMAKE_SOURCE_DIR}/examples/kernels/* ${CMAKE_SOURCE_DIR}/examples/image/* ${CMAKE_SOURCE_DIR}/examples/*.h)
  ExternalProject_Add(firmware-${chip}
    SOURCE_DIR ${CMAKE_SOURCE_DIR}/firmware
    BINARY_DIR ${CMAKE_BINARY_DIR}/firmware-build/${chip}
    CMAKE_ARGS
      -DCMAKE_TOOLCHAIN_FILE=${CMAKE_SOURCE_DIR}/cmake/riscv64-toolchain.cmake
      -DCMAKE_BUILD_TYPE=Release
      -DCMAKE_C_COMPILER_LAUNCHER=${WEFT_FIRMWARE_LAUNCHER}
      -DCMAKE_CXX_COMPILER_LAUNCHER=${WEFT_FIRMWARE_LAUNCHER}
      -DWEFT_ROOT=${CMAKE_SOURCE_DIR}
      -DWEFT_WERROR=${WEFT_WERROR}
      -DWEFT_CHIP=${chip}
      -DWEFT_CHIP_HAL=${hal}
      -DWEFT_ISA=${isa}
      -DWEFT_ABI=${abi}
      -DWEFT_BOARD_HEADER_DIR=${CMAKE_BINARY_DIR}/generated/${chip}
      -DWEFT_FIRMWARE_OUT=${CMAKE_BINARY_DIR}/firmware/${chip}
    INSTALL_COMMAND ""
    LOG_CONFIGURE ON
    LOG_BUILD ON
    LOG_OUTPUT_ON_FAILURE ON
    DEPENDS board-header-${chip})
  ExternalProject_Add_StepDependencies(firmware-${chip} build ${firmware_sources}
    ${CMAKE_BINARY_DIR}/generated/${chip}/weft/board_layout.h)
endfunction()

# Everything a board needs before the host tools exist: its DTB.
function(weft_board_description board)
  weft_board_chip(${board} chip)
  weft_board_dtb(${board} ${chip})
endfunction()

# Once the host tools exist: each chip's header and firmware, built once for
# all the boards that carry it; build/firmware/<board> of a board named unlike
# its chip links to build/firmware/<chip>, so a board's firmware is found by
# its name. Sets WEFT_FIRMWARE_TARGETS in the caller.
function(weft_build_chips)
  set(chips)
  foreach(board ${ARGN})
    weft_board_chip(${board} chip)
    list(APPEND chips ${chip})
    list(APPEND boards_of_${chip} ${board})
  endforeach()
  list(REMOVE_DUPLICATES chips)
  set(targets)
  foreach(chip ${chips})
    weft_chip_header(${chip} ${boards_of_${chip}})
    weft_chip_firmware(${chip})
    list(APPEND targets firmware-${chip})
    foreach(board ${boards_of_${chip}})
      if(board STREQUAL chip)
        continue()
      endif()
      if(board IN_LIST chips)
        message(FATAL_ERROR "board ${board} carries chip ${chip}, but ${board} is also a chip's name: "
          "rename the board (build/firmware/<name> holds a chip's firmware)")
      endif()
      set(link ${CMAKE_BINARY_DIR}/firmware/${board})
      if(IS_DIRECTORY ${link} AND NOT IS_SYMLINK ${link})
        file(REMOVE_RECURSE ${link})  # a tree from when firmware was built per board
      endif()
      file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/firmware)
      file(CREATE_LINK ${chip} ${link} SYMBOLIC)
    endforeach()
  endforeach()
  set(WEFT_FIRMWARE_TARGETS ${targets} PARENT_SCOPE)
endfunction()

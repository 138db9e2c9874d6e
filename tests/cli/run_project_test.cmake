# `flamefleet run PROJECT -o OUT` on the embedded local fleet (coordinator, renderer and workers as
# child processes on OS-chosen loopback ports) for the Miden project fixtures of
# tests/testdata/projects: every [[bin]] is a job with the expected name and cycles (derived with
# the independent Python model, shared/tools/masm_model), the aggregate is their sum; the kernel
# package's bin runs with its kernel.

# Sums the counts of a folded-stacks file into `var`.
function(folded_total file var)
  file(STRINGS ${file} lines)
  set(total 0)
  foreach(line IN LISTS lines)
    string(REGEX MATCH "[0-9]+$" n "${line}")
    math(EXPR total "${total} + ${n}")
  endforeach()
  set(${var} ${total} PARENT_SCOPE)
endfunction()

# run_project(DIR EXPECTED_AGGREGATE JOB CYCLES [JOB CYCLES]...), with the flags in
# ${RUN_FLAGS} (e.g. --kernel FILE).
function(run_project dir aggregate)
  string(REPLACE "../" "" name ${dir})
  set(out ${OUT}/${name})
  file(REMOVE_RECURSE ${out})
  execute_process(COMMAND ${FLAMEFLEET} run ${PROJECTS}/${dir} -o ${out} --workers 2 --no-cache
                          ${RUN_FLAGS}
                  OUTPUT_VARIABLE stdout ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${dir} failed (${rc}):\n${err}")
  endif()
  folded_total(${out}/aggregate.folded got)
  if(NOT got EQUAL aggregate)
    message(FATAL_ERROR "${dir}: aggregate has ${got} cycles, expected ${aggregate}")
  endif()
  set(sum 0)
  set(expected_jobs "")
  set(args ${ARGN})
  list(LENGTH args n)
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last} 2)
    math(EXPR j "${i} + 1")
    list(GET args ${i} job)
    list(GET args ${j} cycles)
    list(APPEND expected_jobs ${job}.folded)
    if(NOT EXISTS ${out}/jobs/${job}.folded OR NOT EXISTS ${out}/jobs/${job}.svg)
      message(FATAL_ERROR "${dir}: missing jobs/${job}.folded or .svg")
    endif()
    folded_total(${out}/jobs/${job}.folded got)
    if(NOT got EQUAL cycles)
      message(FATAL_ERROR "${dir}: job ${job} has ${got} cycles, expected ${cycles}")
    endif()
    math(EXPR sum "${sum} + ${got}")
  endforeach()
  if(NOT sum EQUAL aggregate)
    message(FATAL_ERROR "${dir}: jobs sum to ${sum}, the aggregate is ${aggregate}")
  endif()
  file(GLOB_RECURSE found RELATIVE ${out}/jobs ${out}/jobs/*.folded)
  list(SORT found)
  list(SORT expected_jobs)
  if(NOT found STREQUAL expected_jobs)
    message(FATAL_ERROR "${dir}: jobs ${found}, expected ${expected_jobs}")
  endif()
endfunction()

# A package with a lib and two bins: sum [3, 4] -> [50], square [7] -> [51].
run_project(package 42 sum 23 square 19)
# A workspace of three members: mid/probe [5] -> [45], app/main [5] -> [165], app/loop [1] -> [41].
# mid links base statically ([workspace.dependencies] linkage = "static"): base::bump is copied
# into mid::triple_bump and merges with it (17 and 27 cycles; 21 and 35 linked dynamically);
# app links only mid, so app/loop's own calls into base stay EXTERNAL nodes (31). masm_model with
# base's modules in mid's forest.
run_project(workspace 75 mid/probe 17 app/main 27 app/loop 31)

# The kernel package: its kernel travels with the job. user [6, 7] -> [43] through a syscall.
run_project(kernel 28 user 28)
# A kernel with submodules (mod math, pub mod checks): they travel with the job.
# app [2] -> [6] -> [54], 50 cycles (masm_model with the submodules beside the kernel).
run_project(kernel-modules 50 app 50)

# A plain suite with --kernel: every program job carries the kernel and its submodule; the
# kernel's files in the suite directory are not jobs. a [1] -> [11] 26, b [5] -> [25] 36.
set(RUN_FLAGS --kernel ${PROJECTS}/../kernel_suite/kernel/mod.masm)
run_project(../kernel_suite 62 a.masm 26 b.masm 36)

# A dependency linked statically: util's procedures are copied into main and merge into one
# block: 2448 cycles (2466 linked dynamically; masm_model).
unset(RUN_FLAGS)
run_project(static 2448 main 2448)

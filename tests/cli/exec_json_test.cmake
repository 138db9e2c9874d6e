# Runs `flamefleet exec --json` on the fib oracle under the default dialect (v0.25.7: 3047
# cycles, the entry prologue included) and under v0.16 (3045), and checks the exit codes.
foreach(run "default;3047" "--dialect;v0.16;3045")
  list(POP_BACK run cycles)
  list(FILTER run EXCLUDE REGEX "^default$")
  execute_process(COMMAND ${FLAMEFLEET} exec ${DATA}/oracles/fib_repeat1000.masm --json ${run}
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "exec ${run} failed (${rc}): ${out}")
  endif()
  string(FIND "${out}" "\"cycles\":${cycles}," pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "exec ${run}: expected ${cycles} cycles: ${out}")
  endif()
  string(FIND "${out}" "11112721240812633725" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "exec ${run}: unexpected output: ${out}")
  endif()
endforeach()
execute_process(COMMAND ${FLAMEFLEET} exec ${DATA}/does-not-exist.masm
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "exec of a missing file succeeded")
endif()

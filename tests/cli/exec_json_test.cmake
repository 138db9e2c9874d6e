# Runs `flamefleet exec --json` on the fib oracle and checks the output and the exit codes.
execute_process(COMMAND ${FLAMEFLEET} exec ${DATA}/oracles/fib_repeat1000.masm --json
                OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exec failed (${rc}): ${out}")
endif()
string(FIND "${out}" "\"cycles\":3045" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "unexpected output: ${out}")
endif()
string(FIND "${out}" "11112721240812633725" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "unexpected output: ${out}")
endif()
execute_process(COMMAND ${FLAMEFLEET} exec ${DATA}/does-not-exist.masm
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "exec of a missing file succeeded")
endif()

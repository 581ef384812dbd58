# Writes OUTPUT (a .cpp defining vlbias::cli_internal::build_commit()) with the git commit of
# SOURCE_DIR: "SHORTSHA", "SHORTSHA, dirty" (tracked files changed), or "unknown" when
# SOURCE_DIR is not the top of a git checkout (a tarball) or git is absent. Run at every build
# (cmake -P); the file is rewritten only when the text changes, so a new commit recompiles this
# one file and relinks, nothing else.
set(commit "unknown")
find_program(GIT_EXECUTABLE git)
if(GIT_EXECUTABLE)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --show-toplevel
                  OUTPUT_VARIABLE top RESULT_VARIABLE top_rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  # A tarball unpacked inside some other checkout must not report that checkout's commit.
  if(top_rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" source)
  endif()
  if(top_rc EQUAL 0 AND top STREQUAL source)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --short=10 HEAD
                    OUTPUT_VARIABLE sha RESULT_VARIABLE sha_rc
                    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(sha_rc EQUAL 0 AND NOT sha STREQUAL "")
      set(commit "${sha}")
      execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain
                              --untracked-files=no
                      OUTPUT_VARIABLE changes RESULT_VARIABLE status_rc ERROR_QUIET)
      if(status_rc EQUAL 0 AND NOT changes STREQUAL "")
        set(commit "${commit}, dirty")
      endif()
    endif()
  endif()
endif()
set(text "// Generated at build time by cmake/build_info.cmake.\nnamespace vlbias::cli_internal {\nconst char* build_commit() { return \"${commit}\"; }\n}  // namespace vlbias::cli_internal\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
else()
  set(old "")
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUTPUT}" "${text}")
endif()

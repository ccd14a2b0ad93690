// The test suites' main: GoogleTest's, with every new UOp checked against the spec (SPEC=1, in
// every build: uop/spec.h), then the CUDA render checks still pending (CHECK_RENDER=cuda compiles
// kernels in batches; the last one is compiled here, while NVRTC is still whole). A kernel that
// does not compile fails the run, named in the message.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tinycore/codegen/render_check.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

int main(int argc, char** argv) {
  setenv("SPEC", "1", /*overwrite=*/0);
  testing::InitGoogleTest(&argc, argv);
  int rc = RUN_ALL_TESTS();
  try {
    tc::codegen::finish_render_checks();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "CHECK_RENDER: %s\n", e.what());
    rc = 1;
  }
#ifdef __SANITIZE_ADDRESS__
  // leaks looked for now, while the threads runtimes started (PoCL's) wait idle: at exit, after
  // static destructors have begun to stop them, LeakSanitizer's tracer died scanning them (ASan
  // group_test, on most runs; tools/test.sh)
  __lsan_do_leak_check();
#endif
  return rc;
}

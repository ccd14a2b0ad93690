// The test suites' main: GoogleTest's, with every new UOp checked against the spec (SPEC=1, in
// every build: uop/spec.h), then the CUDA render checks still pending (CHECK_RENDER=cuda compiles
// kernels in batches; the last one is compiled here, while NVRTC is still whole). A kernel that
// does not compile fails the run, named in the message.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "tinycore/codegen/render_check.h"

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
  return rc;
}

// Process isolation of simulations: results in order, and progress lines on long runs.
#include <gtest/gtest.h>

#include "sim/isolated_run.h"

namespace ccsim {
namespace {

TEST(IsolatedRun, LongRunsReportEachTenthOnStderr) {
  std::vector<std::function<std::string()>> jobs;
  for (int i = 0; i < 20; ++i) jobs.emplace_back([i] { return std::to_string(i * i); });
  ::testing::internal::CaptureStderr();
  const std::vector<std::string> out = run_isolated(jobs, 2, /*progress_after=*/10);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_EQ(out.size(), 20u);
  EXPECT_EQ(out[7], "49");
  // 20 jobs: a line at 2, 4, ..., 20 done.
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 10);
  EXPECT_NE(err.find("ccsim: progress: 2/20 simulations done\n"), std::string::npos) << err;
  EXPECT_NE(err.find("ccsim: progress: 20/20 simulations done\n"), std::string::npos) << err;
  // At or below the threshold: silent.
  ::testing::internal::CaptureStderr();
  run_isolated(jobs, 2, /*progress_after=*/20);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace ccsim

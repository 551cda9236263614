#include "cli/run_outputs.h"

#include <sys/stat.h>

#include "common/error.h"
#include "common/output_file.h"
#include "report/html_page.h"
#include "report/run_chart.h"
#include "scenarios/run_results_file.h"

namespace ccsim {

void ensure_output_directory(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) throw InputError("-o", "'" + dir + "' exists and is not a directory");
    return;
  }
  if (::mkdir(dir.c_str(), 0777) != 0) throw InputError("-o", "cannot create directory '" + dir + "'");
}

void write_run_outputs(const std::string& dir, const Scenario& sc, const std::vector<VariantResult>& done, bool complete,
                       const Shard& shard) {
  write_file_atomically(dir + "/results.json", format_run_results_json(sc, done, complete, shard));
  write_file_atomically(dir + "/results.csv", format_run_results_csv(done));
  write_file_atomically(dir + "/report.html", render_report_html(run_chart_model(sc, done, complete)));
}

}  // namespace ccsim

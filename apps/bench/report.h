// bench's results: a Result a case, printed as it is measured, and the files made of them all:
// JSON (a list of cases, each naming its device), a Markdown table and a PNG chart, from one
// device's run or from the runs of several devices merged.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace bench {

// A ratio measured over rounds (bench::Turns): the median is the one claimed, min and max its
// spread.
struct Ratio {
  double median = 0, min = 0, max = 0;
};

struct Result {
  std::string suite, name;
  bool flops = true;                          // rate in GFLOP/s, else GB/s
  double time_ms = 0, rate = 0;               // time_ms 0: an anchor known by its rate alone
  std::map<std::string, double> ratios = {};  // vs the anchors: printed, in --json and --plot
  std::map<std::string, double> fields = {};  // other measurements: printed and in --json
  std::map<std::string, Ratio> spreads = {};  // of ratios measured in rounds, by the ratio's name

  // ratios[name] = r.median, and its spread
  void set_ratio(const std::string& name, const Ratio& r);
};

using Rows = nlohmann::ordered_json;  // a JSON array of cases

void print(const Result& r);  // one line on stdout

// The JSON object of a case measured on `device`: suite, case, device, time_ms, gflops or gbps,
// then the ratios and the other fields by name.
nlohmann::ordered_json to_json(const Result& r, const std::string& device);

// Throws tc::Error naming the file when it cannot be read or written.
Rows read_json(const std::string& path);
void write_json(const std::string& path, const Rows& rows);

// One table of every case, a row a device under each case (in the order the cases came).
std::string markdown_table(const Rows& rows);

// The PNG chart: for one device, its ratios to the anchors; for several, each case's speed on
// each device relative to the CPU (or the first device that ran the case), one bar a device.
void plot_rows(const std::string& path, const Rows& rows);

}  // namespace bench

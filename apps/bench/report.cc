#include "apps/bench/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "apps/common/plot.h"
#include "tinycore/error.h"

namespace bench {
namespace {

// The keys every case has; the rest are ratios to an anchor or other measurements.
bool is_core_key(const std::string& k) {
  return k == "suite" || k == "case" || k == "device" || k == "time_ms" || k == "gflops" ||
         k == "gbps";
}
bool is_ratio_key(const std::string& k) {
  return k.starts_with("ratio_") || k.starts_with("fraction_of_") || k.ends_with("_speedup");
}

std::string case_key(const nlohmann::ordered_json& row) {
  return row.value("suite", "") + " " + row.value("case", "");
}

// The rows grouped by case, the cases in the order their suite and then they first came (the
// cases one device alone ran join the other cases of their suite).
std::vector<std::vector<const nlohmann::ordered_json*>> by_case(const Rows& rows) {
  std::vector<std::vector<const nlohmann::ordered_json*>> groups;
  std::map<std::string, size_t> index, suite_rank;
  for (const auto& row : rows) {
    suite_rank.try_emplace(row.value("suite", ""), suite_rank.size());
    auto [it, fresh] = index.try_emplace(case_key(row), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&row);
  }
  std::stable_sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) {
    return suite_rank[a[0]->value("suite", "")] < suite_rank[b[0]->value("suite", "")];
  });
  return groups;
}

std::vector<std::string> devices_of(const Rows& rows) {
  std::vector<std::string> devices;
  for (const auto& row : rows) {
    std::string d = row.value("device", "");
    if (std::find(devices.begin(), devices.end(), d) == devices.end()) devices.push_back(d);
  }
  return devices;
}

}  // namespace

void Result::set_ratio(const std::string& name, const Ratio& r) {
  ratios[name] = r.median;
  spreads[name] = r;
}

void print(const Result& r) {
  std::string ratios;
  for (const auto& [k, v] : r.ratios) {
    ratios += absl::StrFormat("  %s %.3f", k, v);
    if (auto s = r.spreads.find(k); s != r.spreads.end())
      ratios += absl::StrFormat(" [%.3f-%.3f]", s->second.min, s->second.max);
  }
  for (const auto& [k, v] : r.fields) ratios += absl::StrFormat("  %s %.4g", k, v);
  std::string rate = r.rate > 0
                         ? absl::StrFormat("%9.2f %s", r.rate, r.flops ? "GFLOP/s" : "GB/s   ")
                         : std::string(17, ' ');
  std::string time = r.time_ms > 0 ? absl::StrFormat("%10.3f ms", r.time_ms) : std::string(13, ' ');
  std::printf("%-12s %-24s %s %s%s\n", r.suite.c_str(), r.name.c_str(), time.c_str(), rate.c_str(),
              ratios.c_str());
  std::fflush(stdout);
}

nlohmann::ordered_json to_json(const Result& r, const std::string& device) {
  nlohmann::ordered_json j;
  j["suite"] = r.suite;
  j["case"] = r.name;
  j["device"] = device;
  j["time_ms"] = r.time_ms;
  if (r.rate > 0) j[r.flops ? "gflops" : "gbps"] = r.rate;
  for (const auto& [k, v] : r.ratios) j[k] = v;
  for (const auto& [k, s] : r.spreads) j[k + "_spread"] = {s.min, s.max};
  for (const auto& [k, v] : r.fields) j[k] = v;
  return j;
}

Rows read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) tc::fail("bench: cannot read %s", path);
  Rows rows = Rows::parse(f, nullptr, /*allow_exceptions=*/false);
  if (!rows.is_array()) tc::fail("bench: %s is not a JSON list of cases", path);
  return rows;
}

void write_json(const std::string& path, const Rows& rows) {
  std::ofstream f(path);
  if (!f) tc::fail("bench: cannot write %s", path);
  f << rows.dump(2) << "\n";
  if (!f) tc::fail("bench: cannot write %s", path);
}

std::string markdown_table(const Rows& rows) {
  std::ostringstream out;
  out << "| suite | case | device | time (ms) | rate | vs anchors | measures |\n"
      << "|---|---|---|---:|---:|---|---|\n";
  for (const auto& group : by_case(rows))
    for (const auto* row : group) {
      std::string rate;
      if (row->contains("gflops"))
        rate = absl::StrFormat("%.2f GFLOP/s", (*row)["gflops"].get<double>());
      else if (row->contains("gbps"))
        rate = absl::StrFormat("%.2f GB/s", (*row)["gbps"].get<double>());
      std::vector<std::string> ratios, measures;
      for (const auto& [k, v] : row->items()) {
        if (is_core_key(k) || !v.is_number()) continue;
        std::string text = absl::StrFormat("%s %.4g", k, v.get<double>());
        if (auto s = row->find(k + "_spread"); s != row->end() && s->size() == 2)
          text += absl::StrFormat(" [%.3g-%.3g]", (*s)[0].get<double>(), (*s)[1].get<double>());
        (is_ratio_key(k) ? ratios : measures).push_back(text);
      }
      double ms = row->value("time_ms", 0.0);  // 0: an anchor measured by rate alone
      out << absl::StrFormat("| %s | %s | %s | %s | %s | %s | %s |\n", row->value("suite", ""),
                             row->value("case", ""), row->value("device", ""),
                             ms > 0 ? absl::StrFormat("%.3f", ms) : "", rate,
                             absl::StrJoin(ratios, ", "), absl::StrJoin(measures, ", "));
    }
  return out.str();
}

void plot_rows(const std::string& path, const Rows& rows) {
  std::vector<std::string> devices = devices_of(rows);
  std::vector<plot::Bar> bars;
  if (devices.size() <= 1) {
    for (const auto& row : rows)
      for (const auto& [k, v] : row.items())
        if (is_ratio_key(k) && v.is_number())
          bars.push_back({case_key(row) + " " + k, v.get<double>()});
    std::string device = devices.empty() ? "no device" : devices[0];
    plot::bar_chart(path, "tinycore vs anchors (" + device + ", higher is better)", bars);
    return;
  }
  // Across devices: a case's speed on each device, as the reference device's time over this
  // one's. The reference is the CPU where it ran the case, else the first device that did.
  const std::string reference =
      std::find(devices.begin(), devices.end(), "CPU") != devices.end() ? "CPU" : devices[0];
  for (const auto& group : by_case(rows)) {
    if (group.size() < 2) continue;  // nothing to compare
    const nlohmann::ordered_json* base = group[0];
    for (const auto* row : group)
      if (row->value("device", "") == reference) base = row;
    const std::string base_device = base->value("device", "");
    for (const auto* row : group) {
      std::string label = case_key(*row) + " [" + row->value("device", "") + "]";
      if (base_device != reference) label += " vs " + base_device;
      double t = row->value("time_ms", 0.0);
      bars.push_back({label, t > 0 ? base->value("time_ms", 0.0) / t : NAN});
    }
  }
  plot::bar_chart(
      path, "speed vs " + reference + " (" + absl::StrJoin(devices, ", ") + "; higher is faster)",
      bars);
}

}  // namespace bench

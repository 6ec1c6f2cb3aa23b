// SPDX-License-Identifier: Apache-2.0
#include "runtime/profiler.h"

#include <algorithm>
#include <cstdio>

namespace tl::runtime {

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char u[8];
          std::snprintf(u, sizeof u, "\\u%04x", c);
          out += u;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

}  // namespace

void Profiler::start() {
  events_.clear();
  categories_.clear();
  kernels_.clear();
  dropped_ = 0;
  wall_us_ = 0;
  t0_ = std::chrono::steady_clock::now();
  on_ = true;
}

double Profiler::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
}

void Profiler::keep(Event e) {
  auto& [calls, seconds] = categories_[e.category];
  ++calls;
  seconds += e.duration_us * 1e-6;
  wall_us_ = std::max(wall_us_, e.start_us + e.duration_us);
  if (events_.size() < kMaxEvents) {
    events_.push_back(std::move(e));
  } else {
    ++dropped_;
  }
}

void Profiler::span(std::string name, std::string category, std::string track, double start_us, Args args) {
  if (!on_) return;
  keep(Event{std::move(name), std::move(category), std::move(track), start_us, std::max(0.0, now_us() - start_us),
             std::move(args)});
}

void Profiler::kernel(const std::string& entry, const std::string& label, const std::string& device, double start_us,
                      double seconds, double flops, double bytes) {
  if (!on_) return;
  KernelTotal& t = kernels_[entry];
  t.label = label;
  t.device = device;
  ++t.calls;
  t.seconds += seconds;
  t.flops += flops;
  t.bytes += bytes;
  Event e{entry, "kernel", device, start_us, seconds * 1e6, {}};
  e.args = {{"kernel", label},
            {"GFLOP/s", number(seconds > 0 ? flops / seconds * 1e-9 : 0)},
            {"GB/s", number(seconds > 0 ? bytes / seconds * 1e-9 : 0)}};
  keep(std::move(e));
}

std::string Profiler::trace_json() const {
  // Tracks are threads of one process: the host first, then each device in order of use.
  std::vector<std::string> tracks = {"host"};
  for (const Event& e : events_) {
    if (std::find(tracks.begin(), tracks.end(), e.track) == tracks.end()) tracks.push_back(e.track);
  }
  auto tid = [&](const std::string& track) {
    return static_cast<int>(std::find(tracks.begin(), tracks.end(), track) - tracks.begin());
  };
  std::string out = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"tensorlisp\"}}";
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    out += ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " + std::to_string(i) +
           ", \"args\": {\"name\": " + json_string(tracks[i]) + "}}";
  }
  for (const Event& e : events_) {
    out += ",\n{\"name\": " + json_string(e.name) + ", \"cat\": " + json_string(e.category) +
           ", \"ph\": \"X\", \"pid\": 1, \"tid\": " + std::to_string(tid(e.track)) + ", \"ts\": " + number(e.start_us) +
           ", \"dur\": " + number(e.duration_us);
    if (!e.args.empty()) {
      out += ", \"args\": {";
      for (std::size_t j = 0; j < e.args.size(); ++j) {
        out += (j ? ", " : "") + json_string(e.args[j].first) + ": " + json_string(e.args[j].second);
      }
      out += "}";
    }
    out += "}";
  }
  out += "\n]}\n";
  return out;
}

std::string Profiler::summary(std::size_t top) const {
  std::string out;
  char line[512];
  const double wall = on_ ? now_us() : wall_us_;
  std::snprintf(line, sizeof line, "profile: %.3f ms recorded, %zu events", wall * 1e-3, events_.size());
  out += line;
  if (dropped_ > 0) out += " (" + std::to_string(dropped_) + " more left out of the trace)";
  out += "\n";
  // Stages in the order work flows; a realize holds the plan (scheduling, lowering, compiling)
  // and the kernels it runs.
  static const std::pair<const char*, const char*> kStages[] = {
      {"lisp", "the profiled code, all of it"},
      {"realize", "whole realizes, with the stages below"},
      {"plan", "scheduling, lowering and compiling a new graph structure"},
      {"compile", "kernels compiled"},
      {"load", "kernels loaded from the disk cache"},
      {"tune", "timing candidate kernels"},
      {"kernel", "kernels running"},
  };
  out += "  stage        calls           ms\n";
  for (const auto& [name, what] : kStages) {
    auto it = categories_.find(name);
    if (it == categories_.end()) continue;
    std::snprintf(line, sizeof line, "  %-8s %9llu %12.3f   %s\n", name,
                  static_cast<unsigned long long>(it->second.first), it->second.second * 1e3, what);
    out += line;
  }
  if (kernels_.empty()) return out;
  std::vector<const KernelTotal*> sorted;
  for (const auto& [entry, t] : kernels_) sorted.push_back(&t);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const KernelTotal* a, const KernelTotal* b) { return a->seconds > b->seconds; });
  std::snprintf(line, sizeof line, "top %zu of %zu kernels by time:\n", std::min(top, sorted.size()), sorted.size());
  out += line;
  out += "           ms    calls   GFLOP/s      GB/s  device  kernel\n";
  for (std::size_t i = 0; i < sorted.size() && i < top; ++i) {
    const KernelTotal& t = *sorted[i];
    std::snprintf(line, sizeof line, "  %11.3f %8llu %9.2f %9.2f  %-6s  %s\n", t.seconds * 1e3,
                  static_cast<unsigned long long>(t.calls), t.seconds > 0 ? t.flops / t.seconds * 1e-9 : 0.0,
                  t.seconds > 0 ? t.bytes / t.seconds * 1e-9 : 0.0, t.device.c_str(), t.label.c_str());
    out += line;
  }
  return out;
}

}  // namespace tl::runtime

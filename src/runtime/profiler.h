// SPDX-License-Identifier: Apache-2.0
// The profiler: while on, the JIT device records what it spends time on (each realize, each new
// plan, each kernel compiled or loaded from the disk cache, each tuning, each kernel run) as
// timed events on a host track and a track per device. It writes them as a Chrome trace (the
// Trace Event Format's JSON, which Perfetto and chrome://tracing open) and sums them up as
// text: time per stage and the kernels that took longest. One per interpreter (the API layer
// owns it and gives it to each JIT device it makes); off, it costs one branch per event.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tl::runtime {

class Profiler {
 public:
  // The most events a run keeps for the trace (the summary counts every one).
  static constexpr std::size_t kMaxEvents = 200000;

  struct Event {
    std::string name;      // what ran: "realize", "plan", a kernel's entry, ...
    std::string category;  // "realize", "plan", "compile", "load", "tune", "kernel", "lisp"
    std::string track;     // "host", or the device's name for its kernels
    double start_us = 0;   // since the profile started
    double duration_us = 0;
    std::vector<std::pair<std::string, std::string>> args;  // shown with the event (values as text)
  };

  bool on() const { return on_; }
  // Starts a profile, dropping what an earlier one recorded.
  void start();
  // Stops recording; what was recorded stays for trace_json and summary.
  void stop() { on_ = false; }
  // Microseconds since the profile started.
  double now_us() const;
  using Args = std::vector<std::pair<std::string, std::string>>;
  // Records an event NAME of CATEGORY on TRACK that started at START_US (now_us) and ends now.
  void span(std::string name, std::string category, std::string track, double start_us, Args args = {});
  // Records a kernel run of `seconds` on `device` that started at `start_us`, with its work
  // (flops; bytes read and written), for the summary's table.
  void kernel(const std::string& entry, const std::string& label, const std::string& device, double start_us,
              double seconds, double flops, double bytes);

  // The events as a Chrome trace (JSON object format: {"traceEvents": [...]}).
  std::string trace_json() const;
  // Time per category and the `top` kernels that took longest (calls, ms, GFLOP/s, GB/s).
  std::string summary(std::size_t top = 15) const;
  std::size_t events() const { return events_.size(); }
  std::uint64_t dropped() const { return dropped_; }

 private:
  struct KernelTotal {
    std::string label, device;
    std::uint64_t calls = 0;
    double seconds = 0, flops = 0, bytes = 0;
  };
  void keep(Event e);
  bool on_ = false;
  std::chrono::steady_clock::time_point t0_{};
  double wall_us_ = 0;  // the profile's length so far, at stop or at the last event
  std::vector<Event> events_;
  std::uint64_t dropped_ = 0;
  std::map<std::string, std::pair<std::uint64_t, double>> categories_;  // calls and seconds
  std::map<std::string, KernelTotal> kernels_;                          // by entry
};

}  // namespace tl::runtime

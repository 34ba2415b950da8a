// The strict-mode export ../shared/cases/fidelity/strict_order.pt2 (torch 2.13,
// `torch.export.export(..., strict=True)`: a lifted constant before a buffer; issue 13 item 4),
// read from the file when the shared folder is present (skipped otherwise; tests/test_strict_order
// builds the same program in code). verify passes at torch's level, the departure is listed on its
// own, and create_mutable_buffer adds no second departure; the result saves and reloads.
// SPDX-License-Identifier: BSD-3-Clause
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <epgraph/archive/archive.hpp>
#include <epgraph/epgraph.hpp>
#include <filesystem>
#include <string>
#include <vector>

#ifndef EPGRAPH_SOURCE_DIR
#define EPGRAPH_SOURCE_DIR "."
#endif

namespace {

namespace fs = std::filesystem;
using Program = epgraph::ExportedProgram<epgraph::HostTensor>;
using Strings = std::vector<std::string>;

std::string strict_order_file() {
#ifdef EPGRAPH_SHARED_DIR
  const fs::path p = fs::path(EPGRAPH_SHARED_DIR) / "cases" / "fidelity" / "strict_order.pt2";
#else
  const fs::path p =
      fs::path(EPGRAPH_SOURCE_DIR) / ".." / "shared" / "cases" / "fidelity" / "strict_order.pt2";
#endif
  return fs::exists(p) ? p.string() : std::string();
}

Strings input_names(const Program& ep) {
  Strings out;
  for (const auto& s : ep.graph_signature().input_specs) out.push_back(s.name());
  return out;
}

const char* const departure =
    "Input 'b_offset' (persistent BUFFER) comes after input 'c_gain' (CONSTANT_TENSOR): inputs "
    "must be ordered TOKEN < PARAMETER < persistent BUFFER < non-persistent BUFFER < "
    "CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT";

}  // namespace

TEST_CASE("strict_order.pt2: verifies at torch's level, add-buffer adds no departure",
          "[archive][fidelity][shared][order]") {
  const std::string file = strict_order_file();
  if (file.empty()) {
    WARN("../shared/cases/fidelity/strict_order.pt2 is absent: skipped");
    return;
  }
  Program ep = epgraph::archive::load_archive(file);
  CHECK(input_names(ep) == Strings{"p_w", "c_gain", "b_offset", "x"});
  CHECK_NOTHROW(epgraph::verify(ep));
  CHECK(epgraph::input_order_departures(ep.graph_signature()) == Strings{departure});
  epgraph::VerifyOptions strict;
  strict.level = epgraph::VerifyLevel::canonical_order;
  CHECK_THROWS_WITH(epgraph::verify(ep, strict),
                    std::string("Exported program verification failed:\n  - ") + departure);

  epgraph::create_mutable_buffer(ep, "b_cache",
                                 epgraph::HostTensor::zeros(epgraph::dtype::float32, {3}));
  // Where ExecuTorch 1.5.1's create_mutable_buffer puts it (tests/interop/test_fidelity.py).
  CHECK(input_names(ep) == Strings{"p_w", "b_cache", "c_gain", "b_offset", "x"});
  CHECK_NOTHROW(epgraph::verify(ep));
  CHECK(epgraph::input_order_departures(ep.graph_signature()) == Strings{departure});

  static std::atomic<int> counter{0};
  const fs::path out =
      fs::temp_directory_path() / ("epgraph_strict_order_" + std::to_string(::getpid()) + "_" +
                                   std::to_string(counter++) + ".pt2");
  epgraph::archive::save_archive(ep, out.string());
  const Program back = epgraph::archive::load_archive(out.string());
  std::error_code ec;
  fs::remove(out, ec);
  CHECK(input_names(back) == Strings{"p_w", "b_cache", "c_gain", "b_offset", "x"});
  CHECK(epgraph::to_string(back.graph()) == epgraph::to_string(ep.graph()));
  CHECK_NOTHROW(epgraph::verify(back));
}

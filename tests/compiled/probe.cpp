// Compiled mode's probe (ctest unit.compiled_mode_leaves_entry_points_to_the_library): the same
// calls as a user's load/verify/save tool. Compiled with epgraph::compiled's macros, this object
// must only reference the HostTensor entry points, never define them (see check_probe.cmake).
// SPDX-License-Identifier: BSD-3-Clause
#include <epgraph/archive/load.hpp>
#include <epgraph/archive/save.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/load.hpp>
#include <epgraph/json/save.hpp>
#include <sstream>
#include <string>

int epgraph_compiled_probe(const char* in, const char* out) {
  auto ep = epgraph::archive::load_archive(in);
  epgraph::verify(ep);
  std::ostringstream printed;
  printed << ep.graph();
  ep.graph().lint();
  const std::string text = epgraph::json::save_exported_program_to_string(ep);
  auto back = epgraph::json::load_exported_program_from_string(text);
  epgraph::archive::save_archive(back, out);
  return static_cast<int>(epgraph::archive::archive_programs(in).size() + printed.str().size());
}

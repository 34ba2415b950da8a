// Writing an ExportedProgram as torch.export's serialized JSON (schema 8.20, torch 2.13): the
// definitions of save_exported_program and save_exported_program_to_string (save.hpp declares
// and documents them). The writer's parts are in detail/: write_program.hpp (the document),
// write_graph.hpp (a graph: write_values, write_arguments, write_outputs, schema_record),
// write_signature.hpp (the specs).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <string>

#include "../program/exported_program.hpp"
#include "detail/write_program.hpp"
#include "error.hpp"
#include "save.hpp"

namespace epgraph::json {

template <class Tensor>
std::string save_exported_program_to_string(const ExportedProgram<Tensor>& ep) {
  return detail::save_program(ep);
}

template <class Tensor>
void save_exported_program(const ExportedProgram<Tensor>& ep,
                           const std::filesystem::path& json_file) {
  detail::write_file_atomically(json_file, save_exported_program_to_string(ep));
}

}  // namespace epgraph::json

// Reading torch.export's serialized JSON (schema 8.x, 7.x, 2.x) into an ExportedProgram: the
// definitions of load_exported_program and load_exported_program_from_string (load.hpp declares
// and documents them). The reader's parts are in detail/: parse.hpp (the text to a tree),
// read_program.hpp (the document), read_graph.hpp (a graph: read_values, read_nodes on
// simd_value or the tree, read_arguments, read_record), read_signature.hpp (the specs).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

#include "../ir/tensor.hpp"
#include "../program/exported_program.hpp"
#include "detail/read_program.hpp"
#include "error.hpp"
#include "format.hpp"
#include "load.hpp"
#include "tensor_meta.hpp"

namespace epgraph::json {

template <class Tensor>
ExportedProgram<Tensor> load_exported_program_from_string(std::string_view json_text) {
  return detail::load_program<Tensor>(json_text, detail::default_parser_backend);
}

template <class Tensor>
ExportedProgram<Tensor> load_exported_program(const std::filesystem::path& json_file) {
  // A directory opens as a stream on Linux and reads as an empty text ("malformed JSON").
  std::error_code ec;
  if (std::filesystem::is_directory(json_file, ec)) {
    throw serialization_error("", "cannot open '" + json_file.string() + "': a directory");
  }
  std::ifstream in(json_file, std::ios::binary);
  if (!in) throw serialization_error("", "cannot open '" + json_file.string() + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::string file = json_file.string();
  // A zip file starts with a local file header ("PK\3\4") or, when empty, the end of its central
  // directory ("PK\5\6").
  if (text.size() >= 4 && text[0] == 'P' && text[1] == 'K' &&
      ((text[2] == 3 && text[3] == 4) || (text[2] == 5 && text[3] == 6))) {
    throw serialization_error(
        file, serialization_error("",
                                  "a zip archive (a .pt2/.ep file), not an exported-program "
                                  "JSON record: read it with epgraph::archive::load_archive"));
  }
  try {
    return load_exported_program_from_string<Tensor>(text);
  } catch (const serialization_error& e) {
    throw serialization_error(file, e);
  }
}

}  // namespace epgraph::json

// detail::save_program, which the forward-compatibility check of load_exported_program_from_string
// calls, is defined by the writer (which includes this header first).
#include "serialize.hpp"  // IWYU pragma: keep

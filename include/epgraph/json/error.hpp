// serialization_error: bad serialized input, with the JSON path of the offending value.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>
#include <utility>

#include "../error.hpp"

namespace epgraph::json {

/// Bad serialized input: malformed JSON, a missing required field, a wrong type, an unknown union
/// member, a reference to a value no node produces, a duplicate value name, a schema version that
/// is too new. `what()` is "<json path>: <problem>", e.g.
/// "graph_module.graph.nodes[12].inputs[1].arg: unknown union member 'as_foo'"; for problems of the
/// whole text (malformed JSON) the path is empty and `what()` is the problem alone. Errors of
/// `load_exported_program(file)` are prefixed with the file: "model.json: <path>: <problem>".
/// Mirrors torch's `SerializeError` (torch/_export/serde/serialize.py).
class serialization_error : public epgraph::runtime_error {
 public:
  /// `path` names the offending JSON value (dotted fields, `[i]` indices); `problem` says what is
  /// wrong with it.
  serialization_error(std::string path, const std::string& problem)
      : epgraph::runtime_error(path.empty() ? problem : path + ": " + problem),
        path_(std::move(path)) {}

  /// `error`, naming the file the JSON was read from: `what()` is "<file>: " + error.what();
  /// `path()` is error's JSON path.
  serialization_error(const std::string& file, const serialization_error& error)
      : epgraph::runtime_error(file + ": " + error.what()), path_(error.path()), file_(file) {}

  /// The JSON path of the offending value ("" for the whole document).
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// The file the JSON was read from, when the loader was given one ("" otherwise).
  [[nodiscard]] const std::string& file() const noexcept { return file_; }

 private:
  std::string path_;
  std::string file_;
};

}  // namespace epgraph::json

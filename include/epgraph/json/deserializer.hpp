// epgraph::json::ExportedProgramDeserializer: loads exported-program JSON records one after
// another with one parser, as simdjson intends its parser to be used.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string_view>

#include "deserialize.hpp"

namespace epgraph::json {

/// Loads exported-program JSON records (the text `torch.export.save` writes as
/// models/<name>.json) one after another, keeping the parser and its buffers between loads.
///
/// load_exported_program_from_string makes a new parser for every text: for a large record a
/// good part of its time goes to allocating the parser's buffers and to the first touch of their
/// pages (a 69 MB record: a copy of the text, simdjson's tape and string buffer). A deserializer
/// keeps them, so the second and later loads of records up to the largest one seen reuse them:
/// what a converter or a service that loads many programs wants (bench=json_load_reused in
/// bench/README.md: it gains most on small and medium records; at 100k nodes reading the document
/// and building the graph dominate). The cost is memory: between loads it holds a few times the
/// largest text it parsed (measured in bench/README.md; free it with release()).
///
/// Without simdjson (epgraph::json built without it, EPGRAPH_JSON_HAS_SIMDJSON 0) it holds
/// nothing and each load is load_exported_program_from_string's.
///
/// Not thread-safe: one deserializer per thread. Movable, not copyable.
///
/// Mirrors torch/_export/serde/serialize.py ExportedProgramDeserializer (whose deserialize()
/// builds the program from the parsed record; torch parses the text with json.loads first).
class ExportedProgramDeserializer {
 public:
  ExportedProgramDeserializer() = default;
  ExportedProgramDeserializer(const ExportedProgramDeserializer&) = delete;
  ExportedProgramDeserializer& operator=(const ExportedProgramDeserializer&) = delete;
  ExportedProgramDeserializer(ExportedProgramDeserializer&&) noexcept = default;
  ExportedProgramDeserializer& operator=(ExportedProgramDeserializer&&) noexcept = default;
  ~ExportedProgramDeserializer() = default;

  /// Builds the program that `json_text` (an exported-program JSON record; read, not kept)
  /// describes: the same program, and the same errors, as
  /// load_exported_program_from_string<Tensor>(json_text), which documents both. The
  /// deserializer is left usable after an error (its parser is reset by the next load).
  ///
  /// Throws serialization_error as load_exported_program_from_string does, std::bad_alloc.
  /// O(size of the text); no allocation for the parser when the text is no longer than one
  /// loaded before.
  ///
  /// Mirrors torch/_export/serde/serialize.py ExportedProgramDeserializer.deserialize.
  template <class Tensor = HostTensor>
  [[nodiscard]] ExportedProgram<Tensor> deserialize(std::string_view json_text) {
    return detail::load_program<Tensor>(json_text, detail::default_parser_backend, &cache_);
  }

  /// Frees the parser and its buffers (the next deserialize() makes new ones). Never throws.
  /// O(1) (plus freeing).
  void release() noexcept { cache_ = {}; }

 private:
  detail::ParserCache cache_;
};

}  // namespace epgraph::json

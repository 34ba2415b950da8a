// epgraph test support: what each fuzz target does with one input, shared by the fuzz targets
// (tests/fuzz/*.cpp, which abort on a problem) and the unit tests that replay the committed
// regression inputs (tests/fuzz/regressions/<target>/). Each function returns "" when every
// check held, otherwise the problem. Needs epgraph::json; define EPGRAPH_TEST_WITH_ARCHIVE before
// including it (and link epgraph::archive) for the archive body.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <epgraph/json/json.hpp>
#ifdef EPGRAPH_TEST_WITH_ARCHIVE
#include <epgraph/archive/archive.hpp>
#endif
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "edit_sequences.hpp"
#include "json_backend_outcome.hpp"
#include "snapshot.hpp"

namespace epgraph_test {

/// save -> load -> save: the reloaded program prints like `ep` (graph and signature), verifies
/// (without state: JSON carries no weights) and saves to the same text. "" or the problem.
/// How many json_round_trip calls ended in one of the accepted save refusals (statistics).
inline std::size_t json_round_trip_refusals = 0;

inline std::string json_round_trip(const Program& ep) {
  std::string first;
  try {
    first = epgraph::json::save_exported_program_to_string(ep);
  } catch (const epgraph::json::serialization_error& e) {
    // Documented refusals for programs torch's format cannot hold, which edits can make (RAUW,
    // set_buffer_mutation): a custom object as a graph output, and the tuple result of a
    // with_effects node (no metadata: its getitem users carry it) used as a value. The latter is
    // accepted only when the named node really is such a node.
    const std::string_view what(e.what());
    if (what.find("is a custom object, which torch's format cannot return") !=
        std::string_view::npos) {
      ++json_round_trip_refusals;
      return "";
    }
    // A getitem node reading something that is not written as a multi-output node (e.g. a
    // placeholder, after replace_all_uses_with): torch's format cannot hold it.
    const std::string_view getitem_prefix = "graph_module.graph.nodes: node '";
    if (what.rfind(getitem_prefix, 0) == 0) {
      const std::string_view rest = what.substr(getitem_prefix.size());
      const std::string name(rest.substr(0, rest.find('\'')));
      const epgraph::Node* n = ep.graph().find_node(name);
      const epgraph::Node* parent =
          n != nullptr && !n->args().empty() ? n->args()[0].node() : nullptr;
      bool tuple_like = parent != nullptr && parent->op() == epgraph::OpCode::call_function &&
                        parent->target() != "operator.getitem";
      if (tuple_like) {
        for (const epgraph::Node* u : parent->users()) {
          tuple_like = tuple_like && u->target() == "operator.getitem" && u->args().size() == 2 &&
                       u->args()[1].is<std::int64_t>();
        }
      }
      if (n != nullptr && n->target() == "operator.getitem" && !tuple_like &&
          rest.find("' (operator.getitem) cannot be written") != std::string_view::npos) {
        ++json_round_trip_refusals;
        return "";
      }
    }
    const std::string_view prefix = "graph_module.graph.tensor_values: node '";
    if (what.rfind(prefix, 0) == 0) {
      const std::string_view rest = what.substr(prefix.size());
      const std::string name(rest.substr(0, rest.find('\'')));
      const epgraph::Node* n = ep.graph().find_node(name);
      if (n != nullptr && !n->meta().val.has_value() &&
          n->target() == "torch.ops.higher_order.with_effects" &&
          rest.substr(name.size()) ==
              "' produces a tensor but has no tensor metadata (NodeMeta::val); set it before "
              "saving") {
        ++json_round_trip_refusals;
        return "";
      }
    }
    return std::string("save threw: ") + e.what() + "\n" + epgraph::to_string(ep.graph()) + "\n" +
           epgraph::to_string(ep.graph_signature());
  } catch (const std::exception& e) {
    return std::string("save threw: ") + e.what() + "\n" + epgraph::to_string(ep.graph()) + "\n" +
           epgraph::to_string(ep.graph_signature());
  }
  Program back;
  try {
    back = epgraph::json::load_exported_program_from_string<Tensor>(first);
  } catch (const std::exception& e) {
    return std::string("loading the saved text threw: ") + e.what() + "\n" + first + "\n" +
           epgraph::to_string(ep.graph()) + "\n" + epgraph::to_string(ep.graph_signature());
  }
  if (epgraph::to_string(back.graph()) != epgraph::to_string(ep.graph())) {
    return "the reloaded graph differs:\n" + epgraph::to_string(ep.graph()) + "\nvs\n" +
           epgraph::to_string(back.graph());
  }
  if (epgraph::to_string(back.graph_signature()) != epgraph::to_string(ep.graph_signature())) {
    return "the reloaded signature differs:\n" + epgraph::to_string(ep.graph_signature()) +
           "\nvs\n" + epgraph::to_string(back.graph_signature());
  }
  std::string second;
  try {
    second = epgraph::json::save_exported_program_to_string(back);
  } catch (const std::exception& e) {
    return std::string("saving the reloaded program threw: ") + e.what();
  }
  if (second != first) return "save(load(save(p))) != save(p):\n" + first + "\nvs\n" + second;
  return "";
}

/// fuzz_json: the input is JSON text. Loading either throws serialization_error (and nothing
/// else) or gives a program that saves, reloads and saves again to the same text. With simdjson,
/// both parser backends (one NodeReader on simdjson's document and on nlohmann's tree) give the
/// same program or the same error.
inline std::string fuzz_json_body(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
#if EPGRAPH_JSON_HAS_SIMDJSON
  {
    using epgraph::json::detail::parser_backend;
    const std::string simd = json_backend_outcome(text, parser_backend::simdjson);
    const std::string tree = json_backend_outcome(text, parser_backend::nlohmann);
    if (simd != tree) {
      return "the parser backends disagree:\nsimdjson: " + simd.substr(0, 2000) +
             "\nnlohmann: " + tree.substr(0, 2000);
    }
  }
#endif
  Program ep;
  try {
    ep = epgraph::json::load_exported_program_from_string<Tensor>(text);
  } catch (const epgraph::json::serialization_error&) {
    return "";
  } catch (const std::exception& e) {
    return std::string("load threw something other than serialization_error: ") + e.what();
  }
  std::string first;
  try {
    first = epgraph::json::save_exported_program_to_string(ep);
  } catch (const epgraph::json::serialization_error&) {
    return "";  // e.g. an opaque field that is not valid JSON on its own: reported, not a crash
  } catch (const std::exception& e) {
    return std::string("save of a loaded program threw: ") + e.what();
  }
  Program back;
  try {
    back = epgraph::json::load_exported_program_from_string<Tensor>(first);
  } catch (const std::exception& e) {
    return std::string("reloading saved text threw: ") + e.what();
  }
  std::string second;
  try {
    second = epgraph::json::save_exported_program_to_string(back);
  } catch (const std::exception& e) {
    return std::string("saving the reloaded program threw: ") + e.what();
  }
  if (second != first) return "save(load(save(x))) != save(x)";
  return "";
}

/// fuzz_edits: the input bytes drive random_program and run_random_edits (up to 64 edits) with
/// JSON round trips among the operations.
inline std::string fuzz_edits_body(const std::uint8_t* data, std::size_t size) {
  Chooser chooser(data, size);
  return run_random_sequence(chooser, 64, json_round_trip);
}

#ifdef EPGRAPH_TEST_WITH_ARCHIVE
/// fuzz_archive: the input is a zip file, written to `scratch` (a path the caller owns). Loading
/// either throws archive_error (and nothing else) or gives a program that saves to
/// `scratch`.out.pt2 and reloads to the same snapshot.
inline std::string fuzz_archive_body(const std::uint8_t* data, std::size_t size,
                                     const std::filesystem::path& scratch) {
  {
    std::ofstream out(scratch, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) return "cannot write " + scratch.string();
  }
  Program ep;
  try {
    ep = epgraph::archive::load_archive<Tensor>(scratch);
  } catch (const epgraph::archive::archive_error&) {
    return "";
  } catch (const std::exception& e) {
    return std::string("load_archive threw something other than archive_error: ") + e.what();
  }
  const std::filesystem::path again = scratch.string() + ".out.pt2";
  try {
    epgraph::archive::save_archive(ep, again);
  } catch (const epgraph::archive::archive_error&) {
    return "";  // e.g. a config record kept verbatim that save refuses: reported, not a crash
  } catch (const std::exception& e) {
    return std::string("save_archive of a loaded program threw: ") + e.what();
  }
  Program back;
  try {
    back = epgraph::archive::load_archive<Tensor>(again);
  } catch (const std::exception& e) {
    return std::string("reloading the saved archive threw: ") + e.what();
  }
  // An entry whose data do not match their CRC is found only when read (weights are lazy), and a
  // save that keeps the layout copies it raw, unread, like cp: the copy then reads with the same
  // problem, under its own file name.
  const auto snapshot_or_problem = [](const Program& p, const std::filesystem::path& file,
                                      Snapshot& snap) -> std::string {
    try {
      snap = snapshot(p);
      return "";
    } catch (const epgraph::archive::archive_error& e) {
      const std::string what = e.what();
      const std::string prefix = file.string() + ": ";
      return what.compare(0, prefix.size(), prefix) == 0 ? what.substr(prefix.size()) : what;
    }
  };
  Snapshot loaded, reloaded;
  const std::string loaded_problem = snapshot_or_problem(ep, scratch, loaded);
  std::string reloaded_problem;
  try {
    reloaded_problem = snapshot_or_problem(back, again, reloaded);
  } catch (const std::exception& e) {
    return std::string("reading the reloaded archive threw: ") + e.what();
  }
  if (loaded_problem != reloaded_problem) {
    return "reading the loaded archive gave '" + loaded_problem + "', the reloaded one '" +
           reloaded_problem + "'";
  }
  if (reloaded != loaded) return "the reloaded archive differs from the loaded one";
  return "";
}
#endif

/// The committed regression inputs of one fuzz target: every file of
/// `<source>/tests/fuzz/regressions/<target>/`, sorted by name.
inline std::vector<std::filesystem::path> regression_inputs(const std::string& source_dir,
                                                            const std::string& target) {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path dir =
      std::filesystem::path(source_dir) / "tests" / "fuzz" / "regressions" / target;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The bytes of `file`.
inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace epgraph_test
